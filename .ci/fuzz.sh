#!/usr/bin/env bash
# OpenAPI-driven fuzzing with schemathesis: every operation of
# static/docs/api/openapi.json, served by a fresh `cfdi-extract serve`, must never
# answer 5xx and must answer only documented statuses, content types and shapes.
#
# Installs schemathesis into target/venv, builds the debug binary, provisions an org, a
# user and one entity through the CLI/API, and runs schemathesis (bounded in examples
# and time). When it can, it runs the server and the fuzzer in a private network
# namespace that has only loopback, so that nothing the fuzzer creates (webhook URLs)
# can make the server reach another host; webhook deliveries are also scheduled far in
# the future, so none is attempted during the run.
#
# FUZZ_ENGINE=postgres runs the server on PostgreSQL instead of SQLite: a throwaway
# server from .ci/postgres.sh, started inside the same namespace (issue 42: the engines
# must agree on bad input too).
#
# Environment: FUZZ_MAX_EXAMPLES (default 30), FUZZ_TIME_LIMIT seconds (default 300),
# FUZZ_SEED (default fixed, for reproducible CI; "random" for a new one each run),
# FUZZ_REPORT_DIR (default target/schemathesis), FUZZ_CHECKS (schemathesis --checks;
# default: no 5xx, and only documented statuses, content types and response shapes).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"

SCHEMATHESIS_VERSION="4.32.5"
VENV="$ROOT/target/venv"
MAX_EXAMPLES="${FUZZ_MAX_EXAMPLES:-30}"
TIME_LIMIT="${FUZZ_TIME_LIMIT:-300}"
SEED="${FUZZ_SEED:-20261121}"
ENGINE="${FUZZ_ENGINE:-sqlite}"
REPORT_DIR="${FUZZ_REPORT_DIR:-$ROOT/target/schemathesis-$ENGINE}"
CHECKS="${FUZZ_CHECKS:-not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance}"
EMAIL="fuzz@example.com"
PASSWORD="fuzz-password-1"

inner() {
  # Runs inside the namespace (or directly when none could be made).
  if [ "${FUZZ_NETNS:-0}" = 1 ]; then
    ip link set lo up
  fi
  # Globals: the EXIT trap runs after this function has returned.
  WORK="$(mktemp -d)"
  SERVER_PID=""
  local bin base="" status=0 work="$WORK" server_pid
  bin="$ROOT/target/debug/cfdi-extract"
  PG_DIR=""
  cleanup() {
    local server_pid="$SERVER_PID" work="$WORK"
    if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
      kill "$server_pid" 2>/dev/null || true
      for _ in $(seq 1 50); do
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.1
      done
      kill -9 "$server_pid" 2>/dev/null || true
    fi
    if [ -n "$PG_DIR" ]; then
      bash "$ROOT/.ci/postgres.sh" stop "$PG_DIR" || true
    fi
    rm -rf "$work"
  }
  trap cleanup EXIT INT TERM

  local clean_env=(env -u CFDI_EXTRACT_DATA_DIR -u CFDI_EXTRACT_PORT -u CFDI_EXTRACT_ADDRESS -u RUST_LOG
    -u CFDI_EXTRACT_DATABASE_URL)
  if [ "$ENGINE" = postgres ]; then
    local exports
    exports="$(bash "$ROOT/.ci/postgres.sh" start)"
    eval "$exports"
    PG_DIR="$CFDI_EXTRACT_TEST_POSTGRES_DIR"
    clean_env+=("CFDI_EXTRACT_DATABASE_URL=$CFDI_EXTRACT_TEST_POSTGRES")
  fi
  local org
  org="$("${clean_env[@]}" "$bin" org create --data-dir "$work/data" "Fuzz SA de CV")"
  printf '%s\n' "$PASSWORD" |
    "${clean_env[@]}" "$bin" user create --data-dir "$work/data" --org "$org" --email "$EMAIL" --password-stdin >/dev/null

  "${clean_env[@]}" "$bin" serve --data-dir "$work/data" --address 127.0.0.1 --port 0 \
    --sim-latency 0ms --workers 2 \
    --webhook-retry-schedule 1000h --webhook-timeout 1s \
    >"$work/server.out" 2>"$work/server.err" &
  server_pid=$!
  SERVER_PID=$server_pid
  for _ in $(seq 1 300); do
    base="$(sed -n 's#^listening on \(http://[0-9.:]*\).*#\1#p' "$work/server.out" | head -1)"
    [ -n "$base" ] && break
    if ! kill -0 "$server_pid" 2>/dev/null; then
      echo "fuzz.sh: the server exited" >&2
      cat "$work/server.out" "$work/server.err" >&2
      return 1
    fi
    sleep 0.1
  done
  if [ -z "$base" ]; then
    echo "fuzz.sh: the server did not print its address within 30 s" >&2
    return 1
  fi

  # One entity with a few invoices (imported as a user would), so that lists and the
  # links from them lead to real resources. An import takes only documents the entity
  # issued, so the entity has the samples' issuer RFC (an invoice and its complement).
  local entity samples="$ROOT/tests/fixtures/cfdi-samples"
  entity="$(curl -fsS -u "$EMAIL:$PASSWORD" -H 'content-type: application/json' \
    -d '{"tax_id":"H&E951128469","name":"Fuzz entity","ciec_password":"goodpass"}' \
    "$base/v1/entities" | sed -n 's/.*"id":"\([0-9a-f-]*\)".*/\1/p')"
  if [ -n "$entity" ] && [ -d "$samples" ]; then
    "${clean_env[@]}" "$bin" invoices import --data-dir "$work/data" --entity "$entity" --direction issued \
      "$samples/cfdi40-ingreso-ppd-tfd-ampersand-rfc.xml" \
      "$samples/cfdi40-pago20-tfd-full-payment-of-ppd.xml" >/dev/null
  fi

  echo "== schemathesis $SCHEMATHESIS_VERSION against $base on $ENGINE (max examples $MAX_EXAMPLES, time limit ${TIME_LIMIT}s, seed $SEED)"
  local seed_args=(--seed "$SEED")
  [ "$SEED" = random ] && seed_args=()
  mkdir -p "$REPORT_DIR"
  # Schemathesis reads no config file from the repository: run it from the work dir.
  # One worker: with several, hypothesis' concurrent ast.parse trips a CPython 3.11 bug
  # ("AST constructor recursion depth mismatch") and the run reports a runtime error.
  (
    cd "$work"
    timeout --kill-after=10 "$TIME_LIMIT" "$VENV/bin/schemathesis" --no-color run \
      "$base/docs/api/openapi.json" \
      --url "$base" \
      --auth "$EMAIL:$PASSWORD" \
      --checks "$CHECKS" \
      --max-examples "$MAX_EXAMPLES" \
      --workers 1 \
      --request-timeout 20 \
      --generation-database none \
      --report junit --report-dir "$REPORT_DIR" \
      "${seed_args[@]}"
  ) || status=$?
  if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    echo "fuzz.sh: schemathesis did not finish within ${TIME_LIMIT}s" >&2
  fi
  if grep -q 'panicked' "$work/server.err" 2>/dev/null; then
    echo "fuzz.sh: the server panicked:" >&2
    grep -A5 'panicked' "$work/server.err" >&2
    status=1
  fi
  if [ "$status" -ne 0 ]; then
    echo "--- server stderr (last 40 lines)" >&2
    tail -40 "$work/server.err" >&2 || true
  fi
  echo "data directory after the run: $(du -sh "$work/data" | cut -f1)"
  return "$status"
}

if [ "${1:-}" = "--inner" ]; then
  inner
  exit $?
fi

# --- schemathesis in a venv (PyPI)
if ! [ -x "$VENV/bin/schemathesis" ] ||
  ! "$VENV/bin/schemathesis" --version 2>/dev/null | grep -q "version $SCHEMATHESIS_VERSION\$"; then
  echo "== installing schemathesis $SCHEMATHESIS_VERSION into $VENV"
  if ! python3 -m venv --clear "$VENV"; then
    # Debian's own python3 needs its venv package.
    if [ "$(id -u)" -eq 0 ]; then
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
      python3 -m venv --clear "$VENV"
    else
      echo "fuzz.sh: python3 -m venv failed (install python3-venv)" >&2
      exit 1
    fi
  fi
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
fi

# --- the binary
echo "== cargo build"
cargo build --locked --bin cfdi-extract

# --- run, in a loopback-only network namespace when possible
export ROOT VENV MAX_EXAMPLES TIME_LIMIT SEED ENGINE REPORT_DIR CHECKS EMAIL PASSWORD SCHEMATHESIS_VERSION
if command -v unshare >/dev/null 2>&1 && command -v ip >/dev/null 2>&1 &&
  unshare -n true 2>/dev/null; then
  FUZZ_NETNS=1 exec unshare -n bash "$0" --inner
else
  echo "fuzz.sh: no private network namespace here; relying on the delivery schedule alone" >&2
  FUZZ_NETNS=0 inner
fi
