# uyuni-db-finalize: brings the database up to the new server, in the new server image with the
# server volumes mounted and the server stopped. PostgreSQL runs in this Job only: SSL disabled
# in postgresql.conf while it does (the certificates come later, with the TLS step) and restored
# afterwards, also when a command fails. Then REINDEX after a migration (the old host's collation
# may differ), new optimizer statistics after pg_upgrade, and the schema check and upgrade of
# `spacewalk-startup-helper check-database`. This can run for hours on a large database.
# Input: NEW_PG_VERSION, REINDEX (true|false), ANALYZE (true|false).
set -eu
: "${NEW_PG_VERSION:?}"
data=/var/lib/pgsql/data
conf=$data/postgresql.conf
saved=$data/postgresql.conf.uyuni-finalize
PATH=/usr/lib/postgresql$NEW_PG_VERSION/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH

as_postgres() {
  runuser -u postgres -- "$@"
}

[ -f "$data/PG_VERSION" ] || { echo "uyuni-db-finalize: no database in $data" >&2; exit 1; }
[ "$(cat "$data/PG_VERSION")" = "$NEW_PG_VERSION" ] || {
  echo "uyuni-db-finalize: $data holds PostgreSQL $(cat "$data/PG_VERSION"), expected $NEW_PG_VERSION" >&2
  exit 1
}

# An interrupted earlier try left its copy: that copy is the original.
[ -f "$saved" ] || cp -p "$conf" "$saved"
started=false
finish() {
  status=$?
  if [ "$started" = true ]; then
    echo "uyuni-db-finalize: stopping PostgreSQL"
    as_postgres pg_ctl --pgdata="$data" --mode=fast --wait stop || status=1
  fi
  echo "uyuni-db-finalize: restoring the SSL settings of postgresql.conf"
  cp -p "$saved" "$conf" && rm -f "$saved"
  exit "$status"
}
trap finish EXIT
trap 'exit 1' INT TERM HUP

echo "uyuni-db-finalize: disabling SSL in postgresql.conf while this Job runs"
sed 's/^\([[:space:]]*ssl\)/#\1/' "$saved" >"$conf"

mkdir -p /run/postgresql
chown postgres:postgres /run/postgresql
echo "uyuni-db-finalize: starting PostgreSQL $NEW_PG_VERSION"
as_postgres pg_ctl --pgdata="$data" --log=/var/lib/pgsql/uyuni-db-finalize.log --timeout=3600 --wait start
started=true

if [ "${REINDEX:-false}" = true ]; then
  echo "uyuni-db-finalize: REINDEX of every database (migrated data), this can take hours"
  as_postgres reindexdb --all --verbose
fi
if [ "${ANALYZE:-false}" = true ]; then
  echo "uyuni-db-finalize: new optimizer statistics (pg_upgrade does not carry them over)"
  as_postgres vacuumdb --all --analyze-in-stages
fi
echo "uyuni-db-finalize: checking and upgrading the database schema"
spacewalk-startup-helper check-database
echo "uyuni-db-finalize: done"
