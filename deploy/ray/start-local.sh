#!/usr/bin/env bash
# A one-node Ray cluster (head only) on 127.0.0.1, for `hydra/launcher=ray`.
#
#   deploy/ray/start-local.sh      # idempotent: a second call is a no-op
#   deploy/ray/stop-local.sh
#
# Needs `pip install -e ".[ray]"` in the Python that runs regbias (the same `ray` must start
# the head). Workers inherit this script's environment (PYTHONPATH included) and run in
# $REGBIAS_RAY_HOME, not in your checkout: regbias must be importable there and every path a
# job reads must be absolute (the sweep's start exports them, see docs/scale.md).
#
# Environment:
#   REGBIAS_RAY_HOME   working directory of the workers and Ray's temp dir (default /tmp/regbias-ray)
#   REGBIAS_RAY_PORT   the head's GCS port (default 6379); jobs connect with RAY_ADDRESS=127.0.0.1:PORT
#   REGBIAS_RAY_CPUS   CPUs offered (default: nproc)
#   RAY                the ray command (default: ray next to `python`, else on PATH)
set -euo pipefail

HOME_DIR="${REGBIAS_RAY_HOME:-/tmp/regbias-ray}"
PORT="${REGBIAS_RAY_PORT:-6379}"
CPUS="${REGBIAS_RAY_CPUS:-$(nproc)}"
PYBIN="$(dirname "$(command -v python)")"
RAY="${RAY:-$( [ -x "$PYBIN/ray" ] && echo "$PYBIN/ray" || echo ray )}"
say() { echo "ray-local: $*"; }

command -v "$RAY" >/dev/null || { echo "ray-local: error: no 'ray' command: pip install -e '.[ray]'" >&2; exit 1; }
# Ray binds to the node IP; this switch makes it keep 127.0.0.1 (loopback only) instead of
# replacing it with the machine's network address.
export RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0

if "$RAY" status --address "127.0.0.1:$PORT" >/dev/null 2>&1; then
  say "already running at 127.0.0.1:$PORT; nothing to do"
  exit 0
fi
mkdir -p "$HOME_DIR/tmp"
cd "$HOME_DIR"
"$RAY" start --head --node-ip-address=127.0.0.1 --port="$PORT" --num-cpus="$CPUS" \
  --include-dashboard=false --disable-usage-stats --temp-dir="$HOME_DIR/tmp" \
  --object-store-memory=$((512 * 1024 * 1024)) >"$HOME_DIR/start.log" 2>&1 \
  || { cat "$HOME_DIR/start.log" >&2; exit 1; }
for _ in $(seq 60); do
  "$RAY" status --address "127.0.0.1:$PORT" >/dev/null 2>&1 && break
  sleep 1
done
"$RAY" status --address "127.0.0.1:$PORT" >/dev/null 2>&1 \
  || { echo "ray-local: error: head not up; see $HOME_DIR/tmp/session_latest/logs" >&2; exit 1; }
echo "127.0.0.1:$PORT" > "$HOME_DIR/address"
say "head up at 127.0.0.1:$PORT ($CPUS CPUs); sweeps: RAY_ADDRESS=127.0.0.1:$PORT python run.py -m ... hydra/launcher=ray"
