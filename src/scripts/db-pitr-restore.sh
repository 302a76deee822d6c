# db-pitr-restore: Job uyuni-db-pitr-restore of plan db-pitr (db.archiving.restoreTo), in the
# server-postgresql image, as root, with the server and the database stopped. Replaces the
# database with the newest base backup of the WAL archive taken before the target time and makes
# PostgreSQL replay the archive up to that time at its next start: the data claim's content is
# deleted, base.tar.gz unpacked into it, recovery.signal created, and restore_command,
# recovery_target_time and recovery_target_action = 'promote' written as a marked block at the
# end of postgresql.conf. Upstream's `mgradm backup db restore` does the same without a target
# time (uyuni-tools mgradm/cmd/backup/db/restore.go @ 0ee843a4,
# mgradm/shared/templates/pgsqlDBRestoreTemplate.go @ a4bf82ba). Nothing is deleted when no base
# backup is older than the target. Prints facts: pitr_base=<id>, pitr_target=<time>.
# Input: PGDATA (the data claim's mount); ARCHIVE_DIR (the archive claim's mount); TARGET_TIME
#   (db.archiving.restoreTo, e.g. 2026-12-03T11:00:00Z).
set -eu
# shellcheck source-path=SCRIPTDIR source=lib/marked-block.sh
. "$(dirname "$0")/lib/marked-block.sh"
: "${PGDATA:?}"
: "${ARCHIVE_DIR:?}"
: "${TARGET_TIME:?}"
me=db-pitr-restore
data=${PGDATA%/}
archive=${ARCHIVE_DIR%/}
fail() {
  echo "$me: $*" >&2
  exit 1
}
case $TARGET_TIME in
  *[!0-9A-Za-z:+.\ -]* ) fail "TARGET_TIME '$TARGET_TIME' is not a time" ;;
esac
# The base backups are named by their UTC start (db-basebackup.sh): the newest before the target.
target=$(date -u -d "$TARGET_TIME" +%Y%m%dT%H%M%SZ) || fail "TARGET_TIME '$TARGET_TIME' is not a time"
[ -d "$data" ] || fail "the database claim is not mounted at $data"
[ -d "$archive/base" ] || fail "no base backup in $archive/base: run plan db-basebackup first; nothing was changed"
base=
for d in "$archive"/base/*; do
  b=$(basename "$d")
  case $b in *.partial ) continue ;; esac
  [ -f "$d/base.tar.gz" ] || continue
  if [ "$(printf '%s\n%s\n' "$b" "$target" | LC_ALL=C sort | tail -n 1)" = "$target" ]; then base=$b; fi
done
[ -n "$base" ] || fail "no base backup in $archive/base was taken before $TARGET_TIME; nothing was changed"
owner=$(stat -c %u:%g "$archive")

echo "$me: replacing the database on $data with base backup $base, to be replayed up to $TARGET_TIME"
find "$data" -mindepth 1 -delete
tar -xzf "$archive/base/$base/base.tar.gz" -C "$data"
: > "$data/recovery.signal"
settings=$(printf '%s\n' \
  "restore_command = 'cp $archive/%f %p'" \
  "recovery_target_time = '$TARGET_TIME'" \
  "recovery_target_action = 'promote'")
write_marked_block "$data/postgresql.conf" \
  '# BEGIN uyuni-cdk db-pitr: the point-in-time restore of plan db-pitr' \
  '# END uyuni-cdk db-pitr' "$settings" > /dev/null || fail "could not write $data/postgresql.conf"
chown -R "$owner" "$data"
chmod 0700 "$data"
echo "pitr_base=$base"
echo "pitr_target=$TARGET_TIME"
