# db-archiving: an init container of the db pod (db.archiving.enabled), in the server-postgresql
# image, as root, before the image's entrypoint. It makes the WAL archive claim PostgreSQL's and
# writes the archiving settings as a marked block at the end of $PGDATA/postgresql.conf, where
# upstream's `mgradm backup db enable` sets them too (uyuni-tools b6ad4452
# mgradm/cmd/backup/db/enable.go: archive_mode on, archive_command, wal_level replica, through
# UpdatePostgresConfig). The last setting of a name wins in postgresql.conf, so the block at the
# end holds over the image's own lines; the block is replaced, never added twice, the rest of the
# file kept. PostgreSQL reads it when it starts; on a claim without a database nothing is written
# (initdb needs an empty directory): archiving starts at the db pod's next start. Only sh,
# coreutils and sed: what the package list of the image's openSUSE postgres base names
# (src/model/db.ts archiveCommand).
# Input: PGDATA (the data claim's mount); ARCHIVE_DIR (the archive claim's mount);
#   ARCHIVE_SETTINGS (lines `name = value`, from src/model/db.ts archiveSettings).
set -eu
: "${PGDATA:?}"
: "${ARCHIVE_DIR:?}"
: "${ARCHIVE_SETTINGS:?}"
data=${PGDATA%/}
file=$data/postgresql.conf
begin='# BEGIN uyuni-cdk db.archiving: rewritten at every start of the db pod, change db.archiving instead'
end='# END uyuni-cdk db.archiving'

fail() {
  echo "db-archiving: $*" >&2
  exit 1
}

[ -d "$ARCHIVE_DIR" ] || fail "the WAL archive claim is not mounted at $ARCHIVE_DIR"
[ -d "$data" ] || fail "the database claim is not mounted at $data"
if [ ! -f "$data/PG_VERSION" ] || [ ! -f "$file" ]; then
  echo "db-archiving: $data holds no database yet, nothing written: archiving starts at the next start"
  exit 0
fi
owner=$(stat -c %u:%g "$data/PG_VERSION")
# PostgreSQL's user writes the archive; nothing in it is changed.
chown "$owner" "$ARCHIVE_DIR"
chmod 0700 "$ARCHIVE_DIR"

new=$(mktemp)
trap 'rm -f "$new"' EXIT
{
  # The file without our block (sed: awk is not in the base image's package list).
  sed -e "\\|^$begin\$|,\\|^$end\$|d" "$file"
  printf '%s\n' "$begin" "$ARCHIVE_SETTINGS" "$end"
} > "$new"

# sha1sum, not cmp: the base image's package list names coreutils, not diffutils.
if [ "$(sha1sum < "$new")" = "$(sha1sum < "$file")" ]; then
  echo "db-archiving: $file already archives to $ARCHIVE_DIR"
  exit 0
fi
# Over the old file: its owner and mode stay.
cat "$new" > "$file"
echo "db-archiving: $file archives WAL to $ARCHIVE_DIR from this start of PostgreSQL on"
