# db-archiving: an init container of the db pod (db.archiving.enabled), in the server-postgresql
# image, as root, before the image's entrypoint. It makes the WAL archive claim PostgreSQL's and
# writes the archiving settings as a marked block at the end of $PGDATA/postgresql.conf, where
# upstream's `mgradm backup db enable` sets them too (uyuni-tools b6ad4452
# mgradm/cmd/backup/db/enable.go: archive_mode on, archive_command, wal_level replica, through
# UpdatePostgresConfig). The last setting of a name wins in postgresql.conf, so the block at the
# end holds over the image's own lines; the block is replaced, never added twice, the rest of the
# file kept. PostgreSQL reads it when it starts; on a claim without a database nothing is written
# (initdb needs an empty directory): archiving starts at the db pod's next start. The block is
# lib/marked-block.sh's, as db-pods-cidr.sh's.
# Input: PGDATA (the data claim's mount); ARCHIVE_DIR (the archive claim's mount);
#   ARCHIVE_SETTINGS (lines `name = value`, from src/model/db.ts archiveSettings).
set -eu
# shellcheck source-path=SCRIPTDIR source=lib/marked-block.sh
. "$(dirname "$0")/lib/marked-block.sh"
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

state=$(write_marked_block "$file" "$begin" "$end" "$ARCHIVE_SETTINGS") || fail "could not write $file"
case $state in
  unchanged ) echo "db-archiving: $file already archives to $ARCHIVE_DIR" ;;
  changed ) echo "db-archiving: $file archives WAL to $ARCHIVE_DIR from this start of PostgreSQL on" ;;
  * ) fail "could not write $file" ;;
esac
