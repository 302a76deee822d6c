# uyuni-db-migrate: upgrades the database to a new PostgreSQL major, in the
# server-database-migration image, as root. The old claim (var-pgsql) is mounted at OLD_DATA and
# only read; the new, empty claim at TARGET. The image's upgrade script upgrades SOURCE_LINK into
# TARGET (it reads the old version from SOURCE_LINK/PG_VERSION, empties TARGET, runs initdb and
# pg_upgrade in copy mode, and copies pg_hba.conf and postgresql.conf back); this Job points
# SOURCE_LINK at the old data, runs that script once, checks the result and marks TARGET as done,
# so a re-run after success does nothing and a re-run after a failure starts over.
# Input: OLD_DATA (the old claim's mount, e.g. /migration/old), SOURCE_LINK (where the upgrade
#   script reads, e.g. /migration/source), TARGET (where it writes, the new claim, e.g.
#   /migration/target), OLD_PG_VERSION (the configuration's postgresql.from), NEW_PG_VERSION,
#   UPGRADE_SCRIPT (default /docker-entrypoint-initdb.d/00-pgsqlVersionUpgrade.sh),
#   POSTGRES_LANG (the new cluster's locale, passed through to the upgrade script), CERT_DIR
#   (optional: the db certificate's tls.crt and tls.key, copied to where the old cluster's
#   postgresql.conf expects them under PKI_DIR, default /etc/pki, so pg_upgrade can start it with
#   ssl on; a Secret volume is read-only, and the upgrade script chowns them to postgres).
set -eu
: "${OLD_DATA:?}" "${SOURCE_LINK:?}" "${TARGET:?}" "${OLD_PG_VERSION:?}" "${NEW_PG_VERSION:?}"
upgrade=${UPGRADE_SCRIPT:-/docker-entrypoint-initdb.d/00-pgsqlVersionUpgrade.sh}
old=${OLD_DATA%/}
link=${SOURCE_LINK%/}
target=${TARGET%/}
marker=$target/.uyuni-cdk-migrated

fail() {
  echo "uyuni-db-migrate: $*" >&2
  exit 1
}
version_of() {
  head -n 1 "$1/PG_VERSION" 2>/dev/null || true
}

case $OLD_PG_VERSION in '' | *[!0-9]*) fail "OLD_PG_VERSION is not a PostgreSQL major version: '$OLD_PG_VERSION'" ;; esac
case $NEW_PG_VERSION in '' | *[!0-9]*) fail "NEW_PG_VERSION is not a PostgreSQL major version: '$NEW_PG_VERSION'" ;; esac
[ "$NEW_PG_VERSION" -gt "$OLD_PG_VERSION" ] || fail "PostgreSQL $OLD_PG_VERSION to $NEW_PG_VERSION is no upgrade"

# The old data: at the claim's root (the db container's layout), in data/ (the older layout of a
# server container holding /var/lib/pgsql), or in data-pg<old> (where uyuni-data-sync moves it
# when the major changes).
if [ -f "$old/PG_VERSION" ]; then
  source=$old
elif [ -f "$old/data/PG_VERSION" ]; then
  source=$old/data
elif [ -f "$old/data-pg$OLD_PG_VERSION/PG_VERSION" ]; then
  source=$old/data-pg$OLD_PG_VERSION
else
  fail "var-pgsql holds no PostgreSQL data: no PG_VERSION in $old, $old/data nor $old/data-pg$OLD_PG_VERSION"
fi
found=$(version_of "$source")
if [ "$found" != "$OLD_PG_VERSION" ]; then
  fail "$source holds PostgreSQL $found, but the configuration says postgresql.from: $OLD_PG_VERSION; set postgresql.from to $found (nothing was changed)"
fi
[ -d "$target" ] || fail "the new database claim is not mounted at $target"

if [ "$(version_of "$target")" = "$NEW_PG_VERSION" ] && [ -f "$marker" ]; then
  echo "uyuni-db-migrate: $target already holds the PostgreSQL $NEW_PG_VERSION upgrade of $source, nothing to do"
  echo "migrated_pg_version=$NEW_PG_VERSION"
  exit 0
fi
[ -x "$upgrade" ] || fail "the upgrade script $upgrade is missing or not executable: is this the server-database-migration image?"

if [ "$source" != "$link" ]; then
  # ln -sfn replaces a link, but would put the link inside a real directory.
  if [ -d "$link" ] && [ ! -L "$link" ]; then
    rmdir "$link" 2>/dev/null || fail "$link is a directory that is not empty: cannot point it at $source"
  fi
  echo "uyuni-db-migrate: $link -> $source"
  ln -sfn "$source" "$link"
fi

if [ -n "${CERT_DIR:-}" ]; then
  pki=${PKI_DIR:-/etc/pki}
  { [ -f "$CERT_DIR/tls.crt" ] && [ -f "$CERT_DIR/tls.key" ]; } || fail "no tls.crt and tls.key in $CERT_DIR (Secret db-cert)"
  mkdir -p "$pki/tls/certs" "$pki/tls/private"
  cp "$CERT_DIR/tls.crt" "$pki/tls/certs/spacewalk.crt"
  (umask 077 && cp "$CERT_DIR/tls.key" "$pki/tls/private/pg-spacewalk.key")
  chmod 0644 "$pki/tls/certs/spacewalk.crt"
  chmod 0600 "$pki/tls/private/pg-spacewalk.key"
  echo "uyuni-db-migrate: the db certificate is at $pki/tls/certs/spacewalk.crt and $pki/tls/private/pg-spacewalk.key"
fi

echo "uyuni-db-migrate: upgrading PostgreSQL $OLD_PG_VERSION ($source) to $NEW_PG_VERSION ($target) with $upgrade"
export OLD_PG_VERSION NEW_PG_VERSION
if [ -n "${POSTGRES_LANG+set}" ]; then export POSTGRES_LANG; fi
status=0
"$upgrade" || status=$?
if [ "$status" -ne 0 ]; then
  fail "$upgrade failed (status $status); the old claim var-pgsql is untouched and this step can be re-run"
fi
got=$(version_of "$target")
[ "$got" = "$NEW_PG_VERSION" ] || fail "after the upgrade $target holds PostgreSQL '$got', not $NEW_PG_VERSION; the old claim var-pgsql is untouched and this step can be re-run"

touch "$marker"
chown --reference="$target/PG_VERSION" "$marker"
echo "uyuni-db-migrate: done: $target holds PostgreSQL $NEW_PG_VERSION"
echo "migrated_pg_version=$NEW_PG_VERSION"
