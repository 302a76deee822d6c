# db-basebackup: Job uyuni-db-basebackup of plan db-basebackup (db.archiving), in the
# server-postgresql image. Takes a new base backup of the running database into the WAL archive
# claim, as upstream's `mgradm backup db rebase` (uyuni-tools mgradm/cmd/backup/db/rebase.go @
# 2f9b128d, RunBaseBackup in enable.go @ 928488e7: `pg_basebackup -U postgres -D <archive> -Ft -z
# -c fast -X fetch`, after deleting everything in the archive first), then removes what the new
# backup no longer needs. Unlike upstream nothing is removed before the new backup is complete:
# it is taken into base/<id>.partial and renamed to base/<id> once pg_basebackup succeeded;
# only then the older base backups go, and the archived WAL segments older than the new backup's
# first one (its .backup history file in the archive names it). `-X none`: the backup's WAL is
# in the archive (PostgreSQL waits until it is archived before pg_basebackup ends).
# Prints facts: base_backup=<id>, base_start_wal=<segment>, pruned_wal=<count>,
#   pruned_base=<ids>, archive_wal=<segments left>.
# Input: PGHOST, PGPORT (the database); POSTGRES_USER, POSTGRES_PASSWORD (the administrator's);
#   ARCHIVE_DIR (the archive claim's mount); BACKUP_ID (optional: the new backup's name, default
#   the UTC time, e.g. 20261203T120000Z).
set -eu
: "${PGHOST:?}"
: "${PGPORT:?}"
: "${POSTGRES_USER:?}"
: "${ARCHIVE_DIR:?}"
export PGPASSWORD="${POSTGRES_PASSWORD:-}"
me=db-basebackup
id=${BACKUP_ID:-$(date -u +%Y%m%dT%H%M%SZ)}
case $id in
  *[!0-9A-Za-z]* | '' ) echo "$me: BACKUP_ID '$id' is not a plain name" >&2; exit 1 ;;
esac
archive=${ARCHIVE_DIR%/}
bases=$archive/base
label=uyuni-cdk-$id

[ -d "$archive" ] || { echo "$me: the WAL archive claim is not mounted at $archive" >&2; exit 1; }
[ ! -e "$bases/$id" ] || { echo "$me: base backup $id exists already" >&2; exit 1; }
mkdir -p "$bases"
rm -rf "$bases/$id.partial"
echo "$me: base backup $id of $PGHOST:$PGPORT into $bases"
pg_basebackup -w -h "$PGHOST" -p "$PGPORT" -U "$POSTGRES_USER" -D "$bases/$id.partial" -Ft -z -X none -c fast -l "$label"
mv "$bases/$id.partial" "$bases/$id"

# The history file PostgreSQL archived for this backup: <segment>.<offset>.backup, LABEL: <label>.
start=
for f in "$archive"/*.backup; do
  [ -f "$f" ] || continue
  if grep -qx "LABEL: $label" "$f"; then
    start=$(basename "$f" | sed 's/\..*$//')
  fi
done
if [ -z "$start" ]; then
  echo "$me: no history file of $label in $archive: nothing pruned" >&2
  exit 1
fi
echo "base_backup=$id"
echo "base_start_wal=$start"

# Segments (24 hex digits) older than the start, by log and segment number (the timeline, the
# first 8 digits, aside, as pg_archivecleanup compares); history files (*.history) are kept.
keep=${start#????????}
pruned=0
for f in "$archive"/????????????????????????*; do
  [ -f "$f" ] || continue
  name=$(basename "$f")
  seg=${name%%.*}
  case $seg in *[!0-9A-F]* ) continue ;; esac
  [ ${#seg} -eq 24 ] || continue
  case $name in *.history ) continue ;; esac
  if [ "$(printf '%s\n%s\n' "${seg#????????}" "$keep" | LC_ALL=C sort | head -n 1)" = "${seg#????????}" ] && [ "${seg#????????}" != "$keep" ]; then
    rm -f "$f"
    pruned=$((pruned + 1))
  fi
done
echo "pruned_wal=$pruned"

old=
for d in "$bases"/*; do
  [ -d "$d" ] || continue
  b=$(basename "$d")
  [ "$b" = "$id" ] && continue
  rm -rf "$d"
  old="$old${old:+ }$b"
done
echo "pruned_base=$old"
echo "archive_wal=$(find "$archive" -maxdepth 1 -type f -name '????????????????????????' | wc -l | tr -d ' ')"
