# uyuni-db-upgrade: upgrades the server's PostgreSQL data from OLD_PG_VERSION to NEW_PG_VERSION
# with pg_upgrade --link, in the migration image that holds both versions. Only var-pgsql is
# mounted (at /var/lib/pgsql): the old cluster moves to data-pg<old> (the data sync already did
# that for a migration), a new cluster is made in data, and the old configuration is restored
# into it. The old cluster stays: with --link the new one shares its files.
# Input: OLD_PG_VERSION, NEW_PG_VERSION, DB_LOCALE (the new cluster's locale).
set -eu
: "${OLD_PG_VERSION:?}" "${NEW_PG_VERSION:?}"
locale=${DB_LOCALE:-en_US.UTF-8}
root=/var/lib/pgsql
data=$root/data
old=$root/data-pg$OLD_PG_VERSION
done_mark=$data/.uyuni-upgraded-from-$OLD_PG_VERSION
upgraded_mark=$data/.uyuni-pg-upgrade-complete

fail() {
  echo "uyuni-db-upgrade: $*" >&2
  exit 1
}
version_of() {
  cat "$1/PG_VERSION" 2>/dev/null || true
}
as_postgres() {
  runuser -u postgres -- "$@"
}

restore_config() {
  echo "uyuni-db-upgrade: restoring the configuration"
  if [ -f "$old/postgresql.conf.uyuni-orig" ]; then
    cp -p "$old/postgresql.conf.uyuni-orig" "$old/postgresql.conf"
    rm -f "$old/postgresql.conf.uyuni-orig"
  fi
  cp -p "$old/postgresql.conf" "$old/pg_hba.conf" "$data/"
  [ ! -f "$old/pg_ident.conf" ] || cp -p "$old/pg_ident.conf" "$data/"
  touch "$done_mark"
  chown postgres:postgres "$done_mark"
  echo "uyuni-db-upgrade: done"
}

if [ "$(version_of "$data")" = "$NEW_PG_VERSION" ] && [ -f "$done_mark" ]; then
  echo "uyuni-db-upgrade: already upgraded to PostgreSQL $NEW_PG_VERSION, nothing to do"
  exit 0
fi
# pg_upgrade finished in an earlier try, restoring the configuration did not.
if [ -f "$upgraded_mark" ]; then
  restore_config
  exit 0
fi
# pg_upgrade --link renames the old pg_control before it links: past that point the old
# cluster cannot be started again, and a half-linked new one must not be thrown away blindly.
if [ -f "$old/global/pg_control.old" ]; then
  fail "an earlier pg_upgrade --link stopped after disabling $old (global/pg_control.old): see that try's log in $root/data/pg_upgrade_output.d before going on by hand"
fi

if [ ! -d "$old" ]; then
  [ "$(version_of "$data")" = "$OLD_PG_VERSION" ] || fail "no PostgreSQL $OLD_PG_VERSION data in $data (found: '$(version_of "$data")')"
  echo "uyuni-db-upgrade: moving the PostgreSQL $OLD_PG_VERSION data to $old"
  mv "$data" "$old"
elif [ -d "$data" ]; then
  # An earlier try stopped half-way: its new cluster holds nothing of value yet.
  [ "$(version_of "$data")" != "$OLD_PG_VERSION" ] || fail "both $data and $old hold PostgreSQL $OLD_PG_VERSION data: refusing to guess which is the database"
  echo "uyuni-db-upgrade: removing the unfinished new cluster of an earlier try"
  rm -rf "$data"
fi
[ "$(version_of "$old")" = "$OLD_PG_VERSION" ] || fail "$old does not hold PostgreSQL $OLD_PG_VERSION data"

# The old server must start without the old certificates, which may not be there any more:
# its ssl settings are commented out for pg_upgrade and put back afterwards.
[ -f "$old/postgresql.conf.uyuni-orig" ] || cp -p "$old/postgresql.conf" "$old/postgresql.conf.uyuni-orig"
sed 's/^\([[:space:]]*ssl\)/#\1/' "$old/postgresql.conf.uyuni-orig" >"$old/postgresql.conf"

echo "uyuni-db-upgrade: creating the PostgreSQL $NEW_PG_VERSION cluster ($locale)"
mkdir -p "$data"
chown postgres:postgres "$data"
chmod 700 "$data"
as_postgres "/usr/lib/postgresql$NEW_PG_VERSION/bin/initdb" --pgdata="$data" --locale="$locale"

echo "uyuni-db-upgrade: pg_upgrade --link from $OLD_PG_VERSION to $NEW_PG_VERSION"
cd "$root"
as_postgres "/usr/lib/postgresql$NEW_PG_VERSION/bin/pg_upgrade" \
  --old-bindir="/usr/lib/postgresql$OLD_PG_VERSION/bin" \
  --new-bindir="/usr/lib/postgresql$NEW_PG_VERSION/bin" \
  --old-datadir="$old" \
  --new-datadir="$data" \
  --link
touch "$upgraded_mark"

restore_config
