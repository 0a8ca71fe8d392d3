#!/usr/bin/env bash
# Stops the one-node SLURM cluster of deploy/slurm/start-local.sh (a no-op when it is down).
# Keeps $REGBIAS_SLURM_HOME (state, logs, the accounting database behind `sacct`);
# `--purge` removes it and the links in /etc/slurm/ too.
set -euo pipefail

HOME_DIR="${REGBIAS_SLURM_HOME:-/var/tmp/regbias-slurm}"
say() { echo "slurm-local: $*"; }

stop_pidfile() {  # name pidfile
  local pid
  [ -f "$2" ] || return 0
  pid="$(cat "$2")"
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
    say "$1 stopped"
  fi
  rm -f "$2"
}

if [ -d "$HOME_DIR/run" ]; then
  stop_pidfile slurmd "$HOME_DIR/run/slurmd.pid"
  stop_pidfile slurmctld "$HOME_DIR/run/slurmctld.pid"
  stop_pidfile slurmdbd "$HOME_DIR/run/slurmdbd.pid"
  stop_pidfile mariadb "$HOME_DIR/mariadb/mariadbd.pid"
  if [ -f "$HOME_DIR/run/munged.ours" ]; then
    stop_pidfile munged /run/munge/munged.pid
    rm -f "$HOME_DIR/run/munged.ours"
  fi
fi
if [ "${1:-}" = "--purge" ]; then
  for name in slurm.conf slurmdbd.conf; do
    if [ -L "/etc/slurm/$name" ] && [ "$(readlink "/etc/slurm/$name")" = "$HOME_DIR/$name" ]; then
      rm -f "/etc/slurm/$name"
    fi
  done
  rm -rf "$HOME_DIR"
  say "removed $HOME_DIR"
fi
say "stopped"
