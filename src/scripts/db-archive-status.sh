# db-archive-status: container archive-status of the db pod (db.archiving.enabled), in the
# server-postgresql image, beside PostgreSQL. Every STATUS_INTERVAL seconds it prints one line
# that `uyuni-cdk status` reads from this container's log (the last line, through the API, no
# exec): what PostgreSQL's pg_stat_archiver says (the newest archived WAL segment and its time,
# how many archive attempts failed, the last failed segment) and how full the archive claim is
# (df), e.g.
#   archive-status checked=2026-12-03T12:00:00Z last_wal=000000010000000000000003
#     last_time=2026-12-03T11:59:41Z failed_count=0 last_failed_wal= size_kib=52428800 used_kib=49152
# (one line), or `archive-status checked=… size_kib=… used_kib=… error=<why>` while the database
# does not answer.
# Upstream's `mgradm backup db status` reads only the settings (archive_mode, archive_command;
# uyuni-tools mgradm/cmd/backup/db/status.go @ 0ee843a4); what was archived is PostgreSQL's
# pg_stat_archiver. Stops at once on SIGTERM (the pod's stop must not wait for its sleep).
# Input: PGHOST, PGPORT (the database, 127.0.0.1 in the pod); POSTGRES_USER, POSTGRES_PASSWORD
#   (the administrator's, from db-admin-credentials); ARCHIVE_DIR (the archive claim's mount);
#   STATUS_INTERVAL (seconds between two lines).
set -eu
: "${PGHOST:?}"
: "${PGPORT:?}"
: "${POSTGRES_USER:?}"
: "${ARCHIVE_DIR:?}"
: "${STATUS_INTERVAL:?}"
export PGPASSWORD="${POSTGRES_PASSWORD:-}"
# The sleep goes with it: nothing of it is left holding the log open.
nap=
stop=
# The trap runs between two commands: it marks the stop and ends the sleep under way; the loop
# checks the mark after starting a sleep too, since a TERM that came while `sleep &` was being
# started runs the trap before `nap` names it. The sleep is ended with KILL, not TERM: a TERM
# that reaches the forked child before it became `sleep` lands in the shell's own handler,
# which the exec then drops, and that sleep outlived the script, holding its output open
# (8 of 150 stops under load, none of 300 with KILL; test/scripts.test.ts).
trap 'stop=1; if [ -n "$nap" ]; then kill -s KILL "$nap" 2>/dev/null || true; fi' TERM INT

# Times in UTC, ISO 8601, one word each: the line is split at spaces (psql -A separates the
# columns with |).
query="SELECT last_archived_wal, to_char(last_archived_time AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), failed_count, last_failed_wal FROM pg_stat_archiver"

report() {
  now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  # df -P: a header, then the file system's line, sizes in KiB (coreutils).
  space=$(df -Pk "$ARCHIVE_DIR" 2>/dev/null | sed -n '2s/^[^ ]*  *\([0-9]*\)  *\([0-9]*\) .*$/size_kib=\1 used_kib=\2/p')
  if row=$(psql -X -w -A -t -q -U "$POSTGRES_USER" -d postgres -c "$query" 2>&1); then
    IFS='|' read -r wal time failed failed_wal <<ROW
$row
ROW
    echo "archive-status checked=$now last_wal=$wal last_time=$time failed_count=$failed last_failed_wal=$failed_wal $space"
  else
    # Last: the message, on one line, may hold spaces.
    echo "archive-status checked=$now $space error=$(printf '%s' "$row" | tr '\n' ' ')"
  fi
}

while [ -z "$stop" ]; do
  report
  [ -z "$stop" ] || break
  sleep "$STATUS_INTERVAL" &
  nap=$!
  if [ -n "$stop" ]; then
    kill -s KILL "$nap" 2>/dev/null || true
    break
  fi
  wait "$nap" || true
  nap=
done
exit 0
