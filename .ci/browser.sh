#!/usr/bin/env bash
# Real-browser check of /docs and the Swagger UI at /docs/api: installs Debian's
# chromium (if missing) and playwright-core (into .ci/node_modules), starts
# `cfdi-extract serve --dev` on a temporary data directory and a free port, and runs
# .ci/browser-check.js against it. Screenshots go to $SCREENSHOT_DIR
# (default target/screenshots). Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"

CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
export SCREENSHOT_DIR="${SCREENSHOT_DIR:-$ROOT/target/screenshots}"

# --- chromium (Debian's package: the browser builds playwright downloads are not reachable)
if ! [ -x "$CHROMIUM" ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "browser.sh: $CHROMIUM is missing and installing it needs root (apt-get install chromium)" >&2
    exit 1
  fi
  echo "== installing chromium"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
"$CHROMIUM" --version 2>/dev/null | grep -v '^\s*$' | tail -1 || true

# --- node and playwright-core
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "browser.sh: node and npm are required" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
fi
STAMP=.ci/node_modules/.cfdi-extract-installed
if ! [ -f .ci/node_modules/playwright-core/package.json ] || ! [ -f "$STAMP" ] ||
  [ .ci/package.json -nt "$STAMP" ] || [ .ci/package-lock.json -nt "$STAMP" ]; then
  echo "== npm install (playwright-core)"
  if [ -f .ci/package-lock.json ]; then
    npm ci --no-audit --no-fund --prefix .ci
  else
    npm install --no-audit --no-fund --prefix .ci
  fi
  touch "$STAMP"
fi

# --- the server
echo "== cargo build"
cargo build --locked --bin cfdi-extract
BIN="$ROOT/target/debug/cfdi-extract"

WORK="$(mktemp -d)"
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 1 50); do
      kill -0 "$SERVER_PID" 2>/dev/null || break
      sleep 0.1
    done
    kill -9 "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

# Port 0: the server picks a free port and prints it.
env -u CFDI_EXTRACT_DATA_DIR -u CFDI_EXTRACT_PORT -u CFDI_EXTRACT_ADDRESS \
  "$BIN" serve --data-dir "$WORK/data" --address 127.0.0.1 --port 0 --dev \
  >"$WORK/server.out" 2>"$WORK/server.err" &
SERVER_PID=$!

BASE=""
for _ in $(seq 1 300); do
  BASE="$(sed -n 's#^listening on \(http://[0-9.:]*\).*#\1#p' "$WORK/server.out" | head -1)"
  [ -n "$BASE" ] && break
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    echo "browser.sh: the server exited" >&2
    cat "$WORK/server.out" "$WORK/server.err" >&2
    exit 1
  fi
  sleep 0.1
done
if [ -z "$BASE" ]; then
  echo "browser.sh: the server did not print its address within 30 s" >&2
  cat "$WORK/server.out" "$WORK/server.err" >&2
  exit 1
fi
echo "== browser check against $BASE"

# A second organization, whose user must see none of the demo organization's data.
OTHER_EMAIL=other@example.com
OTHER_PASSWORD=other-password-1
"$BIN" org create --data-dir "$WORK/data" "Other firm" >/dev/null
printf '%s' "$OTHER_PASSWORD" |
  "$BIN" user create --data-dir "$WORK/data" --org "Other firm" --email "$OTHER_EMAIL" --password-stdin >/dev/null
export OTHER_EMAIL OTHER_PASSWORD
# The console check imports retention samples through the CLI into the running service.
export CFDI_BIN="$BIN" CFDI_DATA_DIR="$WORK/data"

status=0
CHROMIUM="$CHROMIUM" node .ci/browser-check.js "$BASE" || status=$?
if [ "$status" -ne 0 ]; then
  echo "--- server stderr (last 40 lines)" >&2
  tail -40 "$WORK/server.err" >&2 || true
fi
exit "$status"
