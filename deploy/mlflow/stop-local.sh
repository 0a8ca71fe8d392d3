#!/usr/bin/env bash
# Stops the MLflow server and PostgreSQL of deploy/mlflow/start-local.sh (a no-op when down).
# Keeps $REGBIAS_MLFLOW_HOME (the database and artifacts); `--purge` deletes them too.
set -euo pipefail
HOME_DIR="${REGBIAS_MLFLOW_HOME:-/var/tmp/regbias-mlflow}"
say() { echo "mlflow-local: $*"; }

if [ -f "$HOME_DIR/mlflow.pid" ]; then
  pid="$(cat "$HOME_DIR/mlflow.pid")"
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL -- "-$pid" 2>/dev/null || true
    say "mlflow server stopped"
  fi
  rm -f "$HOME_DIR/mlflow.pid"
fi
PG_BIN="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1 || true)"
if [ -n "$PG_BIN" ] && [ -s "$HOME_DIR/postgres/PG_VERSION" ] \
    && runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$HOME_DIR/postgres" status >/dev/null 2>&1; then
  runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$HOME_DIR/postgres" -m fast -w stop >/dev/null
  say "PostgreSQL stopped"
fi
if [ "${1:-}" = "--purge" ]; then
  rm -rf "$HOME_DIR"
  say "removed $HOME_DIR"
fi
say "stopped"
