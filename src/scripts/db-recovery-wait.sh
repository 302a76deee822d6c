# db-recovery-wait: Job uyuni-db-pitr-recovery of plan db-pitr, in the server-postgresql image.
# Waits until the database the point-in-time restore started has replayed the archive up to its
# target and promoted itself (pg_is_in_recovery() false), as upstream's `mgradm backup db
# restore` waits for recovery.signal to go (uyuni-tools mgradm/cmd/backup/db/restore.go @
# 0ee843a4); fails after RECOVERY_WAIT_SECONDS. Prints the fact recovered=true.
# Input: PGHOST, PGPORT (the database); POSTGRES_USER, POSTGRES_PASSWORD (the administrator's);
#   RECOVERY_WAIT_SECONDS.
set -eu
: "${PGHOST:?}"
: "${PGPORT:?}"
: "${POSTGRES_USER:?}"
: "${RECOVERY_WAIT_SECONDS:?}"
export PGPASSWORD="${POSTGRES_PASSWORD:-}"
waited=0
while :; do
  state=$(psql -X -w -A -t -q -h "$PGHOST" -p "$PGPORT" -U "$POSTGRES_USER" -d postgres -c 'SELECT pg_is_in_recovery()' 2>&1) || true
  if [ "$state" = f ]; then
    echo "db-recovery-wait: recovery ended after ${waited}s"
    echo "recovered=true"
    exit 0
  fi
  if [ "$waited" -ge "$RECOVERY_WAIT_SECONDS" ]; then
    echo "db-recovery-wait: still recovering after ${waited}s ($state): see the db pod's log" >&2
    exit 1
  fi
  sleep 5
  waited=$((waited + 5))
done
