#!/usr/bin/env bash
# A throwaway PostgreSQL server for the integration tests on PostgreSQL (issue 27).
#
# Installs PostgreSQL from the Debian packages when no server binaries are present
# (root only), initdb's a cluster in a temporary directory as the `postgres` user
# (initdb refuses root), starts it on a free local port (its socket in that directory),
# with settings for a test server (fsync off, many connections), and waits until it
# accepts connections. Two ways to use it:
#
#   bash .ci/postgres.sh cargo test --locked --test it
#       Runs the command with CFDI_EXTRACT_TEST_POSTGRES set to the server's URL, then
#       stops the server and removes its files (also when the command fails or is
#       interrupted). Exits with the command's status. The form for .ci/run.
#
#   eval "$(bash .ci/postgres.sh start)"
#   trap 'bash .ci/postgres.sh stop' EXIT
#       `start` prints `export CFDI_EXTRACT_TEST_POSTGRES=postgres://...`,
#       `export CFDI_EXTRACT_TEST_POSTGRES_DIR=...` and, when the server offers TLS,
#       `export CFDI_EXTRACT_TEST_POSTGRES_CA=...` (nothing else on stdout); `stop`
#       stops the server of $CFDI_EXTRACT_TEST_POSTGRES_DIR (or of its argument) and
#       removes the directory.
#
#   bash .ci/postgres.sh restart
#       Restarts the server of $CFDI_EXTRACT_TEST_POSTGRES_DIR (or of its argument) on
#       the same port (`pg_ctl restart -m fast`: sessions are ended, as in a failover or
#       an upgrade), and waits until it accepts connections again. The test of a
#       restart under load calls it (tests/api/instances.rs).
#
#   bash .ci/postgres.sh down    /    bash .ci/postgres.sh up
#       Stops the server of $CFDI_EXTRACT_TEST_POSTGRES_DIR (or of its argument), keeping
#       its cluster, and starts it again on the same port: an outage as long as the
#       caller waits in between (the outage test, tests/api/outage.rs).
#
# The URL is postgres://postgres@127.0.0.1:PORT/postgres (trust authentication, local
# only). The test harness (tests/common/engine.rs) creates one database per data
# directory on it and drops them as their temporary directories go.
#
# The server offers TLS (with the `openssl` command, which Debian's postgresql package
# brings through ssl-cert; without it the server is plain and says so): a CA of its own
# and a certificate for 127.0.0.1 and localhost signed by it, in the cluster's
# directory. The URL has no sslmode, libpq's `prefer`, so the suite connects encrypted;
# CFDI_EXTRACT_TEST_POSTGRES_CA is the CA's PEM file, for the tests of sslmode=verify-*
# (tests/api/instances.rs).
#
# Settings (environment):
#   POSTGRES_TEST_PORT             port (default: a free one between 20000 and 39999)
#   POSTGRES_TEST_DIR              the cluster's directory, created if missing and
#                                  removed at stop (default: a new mktemp -d)
#   POSTGRES_TEST_MAX_CONNECTIONS  default 500: each `serve` opens a pool of up to
#                                  workers + delivery workers + 8 = 28 connections
#                                  (src/commands/serve.rs), the suite runs tests in
#                                  parallel threads (2 on a 2-core box), a test may run
#                                  two or three servers, and a killed server's backends
#                                  linger a moment
#   POSTGRES_TEST_LOCALE           `icu` (default): databases collate by ICU's root
#                                  locale, as a production server's non-C locale would,
#                                  so text the schema forgot to give COLLATE "C" orders
#                                  differently from SQLite and a test shows it; `C` for
#                                  byte order everywhere
set -euo pipefail

PORT="${POSTGRES_TEST_PORT:-}"
MAX_CONNECTIONS="${POSTGRES_TEST_MAX_CONNECTIONS:-500}"
LOCALE="${POSTGRES_TEST_LOCALE:-icu}"

say() { echo "postgres.sh: $*" >&2; }

# The newest installed server's bin directory, or nothing.
bin_dir() {
  local dir
  dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
  if [ -n "$dir" ] && [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then
    echo "$dir"
  fi
}

# Runs a server binary as the user that owns the cluster.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

# True when something listens on TCP port $1 (IPv4 or IPv6), from /proc: no ss/netstat
# on a fresh machine.
port_in_use() {
  local hex
  hex="$(printf '%04X' "$1")"
  # local_address is column 2 (ADDR:PORT in hex), st column 4 (0A = LISTEN).
  awk -v p="$hex" 'NR > 1 { split($2, a, ":"); if (a[2] == p && $4 == "0A") found = 1 }
    END { exit !found }' /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

free_port() {
  local port
  for _ in $(seq 1 50); do
    port=$((20000 + RANDOM % 20000))
    if ! port_in_use "$port"; then
      echo "$port"
      return
    fi
  done
  say "no free port found"
  return 1
}

install_server() {
  if [ -n "$(bin_dir)" ]; then
    return
  fi
  if [ "$(id -u)" -ne 0 ]; then
    say "no PostgreSQL server binaries under /usr/lib/postgresql and installing them needs root"
    return 1
  fi
  say "installing postgresql from the Debian packages"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null
  if [ -z "$(bin_dir)" ]; then
    say "postgresql installed but no /usr/lib/postgresql/*/bin/initdb"
    return 1
  fi
}

ensure_user() {
  if [ "$(id -u)" -ne 0 ] || id postgres >/dev/null 2>&1; then
    return
  fi
  say "creating the postgres user"
  useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin postgres
}

start() {
  install_server
  ensure_user
  local bin dir
  bin="$(bin_dir)"
  if [ -n "${POSTGRES_TEST_DIR:-}" ]; then
    dir="$POSTGRES_TEST_DIR"
    mkdir -p "$dir"
  else
    dir="$(mktemp -d "${TMPDIR:-/tmp}/cfdi-extract-pg.XXXXXX")"
  fi
  dir="$(cd "$dir" && pwd)"
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres: "$dir"
  fi
  chmod 700 "$dir"
  if ! start_in "$bin" "$dir"; then
    stop "$dir"
    return 1
  fi
}

# A CA and a server certificate for 127.0.0.1 and localhost, in $1 (ca.pem,
# server.pem, server.key); false without openssl. EC P-256 keys: quick to make.
make_certificates() {
  local dir="$1"
  if ! command -v openssl >/dev/null 2>&1; then
    say "no openssl command: the server offers no TLS and the TLS tests are skipped"
    return 1
  fi
  local key=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
  {
    openssl req -x509 "${key[@]}" -days 30 -subj "/CN=cfdi-extract test CA" \
      -keyout "$dir/ca.key" -out "$dir/ca.pem" \
      -addext "basicConstraints=critical,CA:TRUE" \
      -addext "keyUsage=critical,keyCertSign,cRLSign" &&
      openssl req "${key[@]}" -subj "/CN=127.0.0.1" \
        -keyout "$dir/server.key" -out "$dir/server.csr" &&
      printf '%s\n' "subjectAltName=IP:127.0.0.1,DNS:localhost" \
        "basicConstraints=critical,CA:FALSE" \
        "keyUsage=critical,digitalSignature" \
        "extendedKeyUsage=serverAuth" >"$dir/server.ext" &&
      openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" \
        -CAcreateserial -days 30 -extfile "$dir/server.ext" -out "$dir/server.pem"
  } >"$dir/openssl.log" 2>&1 || {
    cat "$dir/openssl.log" >&2
    say "cannot make the TLS certificates: the server offers no TLS"
    return 1
  }
  # The server refuses a key others can read; it reads it as the cluster's owner.
  chmod 600 "$dir/server.key" "$dir/ca.key"
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres: "$dir/server.key" "$dir/server.pem"
  fi
}

# Makes and starts the cluster in $2 with the binaries of $1; prints the exports.
start_in() {
  local bin="$1" dir="$2"

  local locale_args=(--locale=C --encoding=UTF8)
  if [ "$LOCALE" = icu ]; then
    locale_args+=(--locale-provider=icu --icu-locale=und)
  fi
  as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth=trust --no-sync --no-instructions \
    "${locale_args[@]}" >"$dir/initdb.log" 2>&1 || {
    cat "$dir/initdb.log" >&2
    say "initdb failed"
    return 1
  }

  local tls=0
  if make_certificates "$dir"; then
    tls=1
  fi

  local attempt port
  for attempt in 1 2 3 4 5; do
    port="${PORT:-$(free_port)}"
    cat >"$dir/data/postgresql.auto.conf" <<CONF
# .ci/postgres.sh: a throwaway server for the tests, not for data anyone keeps.
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
max_connections = $MAX_CONNECTIONS
shared_buffers = 128MB
fsync = off
synchronous_commit = off
full_page_writes = off
wal_level = minimal
max_wal_senders = 0
max_wal_size = 2GB
checkpoint_timeout = 30min
log_min_messages = warning
log_min_error_statement = panic
log_line_prefix = '%m [%p] %d '
CONF
    if [ "$tls" -eq 1 ]; then
      cat >>"$dir/data/postgresql.auto.conf" <<CONF
ssl = on
ssl_cert_file = '$dir/server.pem'
ssl_key_file = '$dir/server.key'
CONF
    fi
    if as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null; then
      break
    fi
    tail -n 20 "$dir/server.log" >&2 || true
    if [ -n "$PORT" ] || [ "$attempt" -eq 5 ] || ! grep -q 'could not bind\|could not create any TCP' "$dir/server.log"; then
      say "the server did not start (the end of its log is above)"
      return 1
    fi
    say "port $port was taken; trying another"
  done

  # pg_ctl -w waited for the server to be ready; check TCP, as the tests connect.
  local ready=0
  for _ in $(seq 1 100); do
    if "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" -U postgres -d postgres; then
      ready=1
      break
    fi
    sleep 0.1
  done
  if [ "$ready" -ne 1 ]; then
    say "the server does not accept connections on 127.0.0.1:$port (log: $dir/server.log)"
    return 1
  fi
  local with=""
  if [ "$tls" -eq 1 ]; then
    with=" with TLS"
  fi
  say "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port$with, cluster in $dir"
  echo "export CFDI_EXTRACT_TEST_POSTGRES=postgres://postgres@127.0.0.1:$port/postgres"
  echo "export CFDI_EXTRACT_TEST_POSTGRES_DIR=$dir"
  if [ "$tls" -eq 1 ]; then
    echo "export CFDI_EXTRACT_TEST_POSTGRES_CA=$dir/ca.pem"
  fi
}

stop() {
  local dir="${1:-${CFDI_EXTRACT_TEST_POSTGRES_DIR:-}}"
  if [ -z "$dir" ]; then
    say "stop: no directory (CFDI_EXTRACT_TEST_POSTGRES_DIR)"
    return 1
  fi
  if [ -f "$dir/data/postmaster.pid" ]; then
    as_owner "$(bin_dir)/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  # Only a directory this script made a cluster in.
  if [ -f "$dir/data/PG_VERSION" ] || [ -f "$dir/initdb.log" ]; then
    rm -rf "$dir"
  fi
}

restart() {
  local dir="${1:-${CFDI_EXTRACT_TEST_POSTGRES_DIR:-}}"
  if [ -z "$dir" ] || [ ! -f "$dir/data/PG_VERSION" ]; then
    say "restart: no cluster in '${dir}' (CFDI_EXTRACT_TEST_POSTGRES_DIR)"
    return 1
  fi
  as_owner "$(bin_dir)/pg_ctl" -D "$dir/data" -l "$dir/server.log" -m fast -w -t 60 restart >/dev/null
}

# The cluster of $1 (or of $CFDI_EXTRACT_TEST_POSTGRES_DIR), checked.
cluster() {
  local dir="${1:-${CFDI_EXTRACT_TEST_POSTGRES_DIR:-}}"
  if [ -z "$dir" ] || [ ! -f "$dir/data/PG_VERSION" ]; then
    say "no cluster in '${dir}' (CFDI_EXTRACT_TEST_POSTGRES_DIR)"
    return 1
  fi
  echo "$dir"
}

down() {
  local dir
  dir="$(cluster "${1:-}")"
  as_owner "$(bin_dir)/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >/dev/null
}

up() {
  local dir
  dir="$(cluster "${1:-}")"
  as_owner "$(bin_dir)/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null
}

case "${1:-}" in
  restart)
    restart "${2:-}"
    ;;
  down)
    down "${2:-}"
    ;;
  up)
    up "${2:-}"
    ;;
  start)
    start
    ;;
  stop)
    stop "${2:-}"
    ;;
  "" | -h | --help)
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
    [ -n "${1:-}" ]
    ;;
  *)
    exports="$(start)"
    eval "$exports"
    trap 'stop "$CFDI_EXTRACT_TEST_POSTGRES_DIR"' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    say "running: $* (CFDI_EXTRACT_TEST_POSTGRES=$CFDI_EXTRACT_TEST_POSTGRES)"
    status=0
    "$@" || status=$?
    exit "$status"
    ;;
esac
