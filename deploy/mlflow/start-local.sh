#!/usr/bin/env bash
# An MLflow tracking server on PostgreSQL, both on 127.0.0.1, for sweeps from many jobs:
#
#   sudo deploy/mlflow/start-local.sh      # idempotent: a second call is a no-op
#   python run.py -m seed='range(3)' experiment=smoke tracking.uri=http://127.0.0.1:5055
#   deploy/mlflow/stop-local.sh
#
# Installs Debian's postgresql when missing (root; `apt-get update` first), creates a
# PostgreSQL cluster under $REGBIAS_MLFLOW_HOME/postgres (owned by the `postgres` user,
# listening on 127.0.0.1 only, role and database `mlflow` with a generated password kept in
# $REGBIAS_MLFLOW_HOME/pg-password), then starts `mlflow server` with that backend store and
# $REGBIAS_MLFLOW_HOME/artifacts as its artifact destination (clients upload through the
# server: no shared filesystem needed for artifacts). Needs `pip install -e ".[server]"`
# (psycopg, the driver SQLAlchemy uses for postgresql://) in the Python that runs it.
#
# Auth is off. Before exposing the port beyond this machine turn on MLflow's basic auth:
# REGBIAS_MLFLOW_AUTH=1 (see docs/scale.md), or put the server behind your own proxy.
#
# Environment:
#   REGBIAS_MLFLOW_HOME   everything the stack writes (default /var/tmp/regbias-mlflow)
#   REGBIAS_MLFLOW_PORT   the server's port (default 5055)
#   REGBIAS_PG_PORT       PostgreSQL's port (default 6543)
#   REGBIAS_MLFLOW_AUTH   1: start with --app-name basic-auth (admin password: $HOME/admin-password)
#   PYTHON                the Python with mlflow and psycopg (default: python)
set -euo pipefail

HOME_DIR="${REGBIAS_MLFLOW_HOME:-/var/tmp/regbias-mlflow}"
PORT="${REGBIAS_MLFLOW_PORT:-5055}"
PG_PORT="${REGBIAS_PG_PORT:-6543}"
PYTHON="${PYTHON:-python}"
PG_DATA="$HOME_DIR/postgres"
URL="http://127.0.0.1:$PORT"
say() { echo "mlflow-local: $*"; }
die() { echo "mlflow-local: error: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (it installs packages and runs PostgreSQL as 'postgres')"
healthy() { "$PYTHON" - "$URL/health" <<'PY' >/dev/null 2>&1
import sys, urllib.request
urllib.request.urlopen(sys.argv[1], timeout=3).close()
PY
}
running() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
as_pg() { runuser -u postgres -- "$@"; }

PG_BIN="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1 || true)"
if [ -n "$PG_BIN" ] && running "$HOME_DIR/mlflow.pid" && healthy \
    && as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" status >/dev/null 2>&1; then
  say "already running at $URL (PostgreSQL on 127.0.0.1:$PG_PORT); nothing to do"
  exit 0
fi

# 1. packages
if [ -z "$PG_BIN" ]; then
  say "installing postgresql"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  PG_BIN="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n1)"
fi
"$PYTHON" -c "import mlflow, psycopg" 2>/dev/null \
  || die "$PYTHON lacks mlflow or psycopg: pip install -e '.[server]'"

# 2. PostgreSQL: a cluster of our own, 127.0.0.1 only
mkdir -p "$HOME_DIR/artifacts" "$HOME_DIR/log"
chown postgres:postgres "$HOME_DIR/log"
if [ ! -s "$PG_DATA/PG_VERSION" ]; then
  mkdir -p "$PG_DATA"
  chown postgres:postgres "$PG_DATA"
  chmod 0700 "$PG_DATA"
  as_pg "$PG_BIN/initdb" -D "$PG_DATA" -U postgres --auth-local=peer --auth-host=scram-sha-256 \
    -E UTF8 >"$HOME_DIR/log/initdb.log" 2>&1 || die "initdb failed: see $HOME_DIR/log/initdb.log"
  say "created a PostgreSQL cluster in $PG_DATA"
fi
if ! as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" status >/dev/null 2>&1; then
  as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$HOME_DIR/log/postgres.log" -w -t 60 start \
    -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $PG_DATA" >/dev/null \
    || die "PostgreSQL did not start: see $HOME_DIR/log/postgres.log"
  say "PostgreSQL started on 127.0.0.1:$PG_PORT"
fi
[ -s "$HOME_DIR/pg-password" ] || (umask 077; head -c 18 /dev/urandom | base64 | tr -d '/+=' \
  > "$HOME_DIR/pg-password")
PG_PW="$(cat "$HOME_DIR/pg-password")"
psql_pg() { as_pg psql -X -q -h "$PG_DATA" -p "$PG_PORT" -U postgres -v ON_ERROR_STOP=1 "$@"; }
psql_pg -d postgres >/dev/null <<SQL
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'mlflow') THEN
    CREATE ROLE mlflow LOGIN PASSWORD '$PG_PW';
  ELSE
    ALTER ROLE mlflow PASSWORD '$PG_PW';
  END IF;
END \$\$;
SQL
for db in mlflow mlflow_auth; do
  if [ -z "$(psql_pg -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$db'")" ]; then
    psql_pg -d postgres -c "CREATE DATABASE $db OWNER mlflow"
  fi
done
STORE="postgresql://mlflow:$PG_PW@127.0.0.1:$PG_PORT/mlflow"

# 3. the MLflow server
if running "$HOME_DIR/mlflow.pid"; then
  kill -TERM -- "-$(cat "$HOME_DIR/mlflow.pid")" 2>/dev/null || true
  sleep 2
fi
# Another process on the port would answer our health checks: refuse instead.
if "$PYTHON" - "$PORT" <<'PY'
import socket, sys
with socket.socket() as s:
    sys.exit(0 if s.connect_ex(("127.0.0.1", int(sys.argv[1]))) == 0 else 1)
PY
then
  die "port $PORT is taken by another process (not this script's server): set REGBIAS_MLFLOW_PORT"
fi
EXTRA=()
if [ "${REGBIAS_MLFLOW_AUTH:-0}" = 1 ]; then
  [ -s "$HOME_DIR/admin-password" ] || (umask 077; head -c 18 /dev/urandom | base64 \
    | tr -d '/+=' > "$HOME_DIR/admin-password")
  (umask 077; cat > "$HOME_DIR/basic_auth.ini" <<INI
[mlflow]
default_permission = READ
database_uri = postgresql://mlflow:$PG_PW@127.0.0.1:$PG_PORT/mlflow_auth
admin_username = admin
admin_password = $(cat "$HOME_DIR/admin-password")
authorization_function = mlflow.server.auth:authenticate_request_basic_auth
INI
  )
  [ -s "$HOME_DIR/flask-secret" ] || (umask 077; head -c 32 /dev/urandom | base64 | tr -d '/+=' \
    > "$HOME_DIR/flask-secret")
  export MLFLOW_AUTH_CONFIG_PATH="$HOME_DIR/basic_auth.ini"
  MLFLOW_FLASK_SERVER_SECRET_KEY="$(cat "$HOME_DIR/flask-secret")"
  export MLFLOW_FLASK_SERVER_SECRET_KEY  # CSRF protection of the auth app's forms
  EXTRA=(--app-name basic-auth)
fi
setsid "$PYTHON" -m mlflow server --backend-store-uri "$STORE" \
  --artifacts-destination "$HOME_DIR/artifacts" --serve-artifacts \
  --host 127.0.0.1 --port "$PORT" --workers 2 "${EXTRA[@]}" \
  </dev/null >"$HOME_DIR/log/mlflow.log" 2>&1 &
echo $! > "$HOME_DIR/mlflow.pid"
for _ in $(seq 120); do
  healthy && break
  running "$HOME_DIR/mlflow.pid" || die "mlflow server exited: see $HOME_DIR/log/mlflow.log"
  sleep 1
done
sleep 2  # a server that lost the port to another one exits right after binding
{ healthy && running "$HOME_DIR/mlflow.pid"; } \
  || die "mlflow server not answering at $URL: see $HOME_DIR/log/mlflow.log"
say "MLflow server at $URL (store: PostgreSQL 127.0.0.1:$PG_PORT/mlflow, artifacts: $HOME_DIR/artifacts${EXTRA:+, basic auth on})"
say "sweeps: python run.py -m ... tracking.uri=$URL"
