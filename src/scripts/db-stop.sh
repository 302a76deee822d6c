# db-stop: the preStop of container db, a fast shutdown of PostgreSQL (`pg_ctl stop -m fast`, as the postgres
# user: open sessions are disconnected, open transactions rolled back, a shutdown checkpoint is
# written and postmaster.pid removed), within the pod's grace. Kubernetes sends the image's stop
# signal, SIGTERM, after this hook; for PostgreSQL that is a smart shutdown, which waits for every
# session to end, so a busy server would be killed at the end of the grace, leaving postmaster.pid
# and a cluster that is not shut down (the backup and pg_upgrade refuse it).
# Without pg_ctl or su, the same fast shutdown by its signal (SIGINT to the postmaster), then the
# same wait.
# Input: the data directory as argument (PGDATA of the image: /var/lib/pgsql/data);
#   WAIT_SECONDS, how long pg_ctl waits (default 170, within the pod's 180 s).
set -eu
data=${1:?the data directory}
data=${data%/}
wait_s=${WAIT_SECONDS:-170}
case $wait_s in '' | *[!0-9]*) wait_s=170 ;; esac
[ -f "$data/postmaster.pid" ] || exit 0

pg_ctl=$(command -v pg_ctl 2>/dev/null || true)
if [ -z "$pg_ctl" ]; then
  for c in /usr/lib/postgresql*/bin/pg_ctl /usr/lib/postgresql/*/bin/pg_ctl; do
    if [ -x "$c" ]; then pg_ctl=$c; fi
  done
fi
if [ -n "$pg_ctl" ]; then
  if [ "$(id -u)" != 0 ]; then
    "$pg_ctl" stop -m fast -w -t "$wait_s" -D "$data" && exit 0
  elif command -v su >/dev/null 2>&1; then
    # pg_ctl refuses to run as root. The arguments are passed as positional parameters, never
    # pasted into the command.
    # shellcheck disable=SC2016 # expanded by the postgres user's shell
    su -s /bin/sh -c '"$0" stop -m fast -w -t "$1" -D "$2"' postgres "$pg_ctl" "$wait_s" "$data" && exit 0
  fi
fi
# The signal pg_ctl stop -m fast sends.
pid=$(head -n 1 "$data/postmaster.pid" 2>/dev/null) || exit 0
case $pid in '' | *[!0-9]*) exit 1 ;; esac
kill -INT "$pid" 2>/dev/null || exit 0
waited=0
while [ -f "$data/postmaster.pid" ] && [ "$waited" -lt "$wait_s" ]; do
  sleep 1
  waited=$((waited + 1))
done
[ ! -f "$data/postmaster.pid" ]
