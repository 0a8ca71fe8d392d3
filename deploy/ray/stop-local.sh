#!/usr/bin/env bash
# Stops the Ray head of deploy/ray/start-local.sh (a no-op when it is down).
# Note: `ray stop` ends every Ray process of this user on this machine.
set -euo pipefail
HOME_DIR="${REGBIAS_RAY_HOME:-/tmp/regbias-ray}"
PORT="${REGBIAS_RAY_PORT:-6379}"
PYBIN="$(dirname "$(command -v python)")"
RAY="${RAY:-$( [ -x "$PYBIN/ray" ] && echo "$PYBIN/ray" || echo ray )}"
export RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0
if command -v "$RAY" >/dev/null && "$RAY" status --address "127.0.0.1:$PORT" >/dev/null 2>&1; then
  "$RAY" stop >/dev/null 2>&1 || "$RAY" stop --force >/dev/null 2>&1
  echo "ray-local: stopped"
else
  echo "ray-local: not running"
fi
rm -f "$HOME_DIR/address"
