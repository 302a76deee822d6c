# uyuni-post-upgrade: the last step on the data before the new server starts on it. Keeps the
# new image's release file in RELEASE_DIR (a server volume), so the next upgrade's inspection
# can refuse a downgrade or a switch between Uyuni and SUSE Manager; checks that the data is
# ready for the server: a database of the image's PostgreSQL and a configuration.
# Input: RELEASE_DIR, NEW_PG_VERSION.
set -eu
: "${RELEASE_DIR:?}" "${NEW_PG_VERSION:?}"

fail() {
  echo "uyuni-post-upgrade: $*" >&2
  exit 1
}

[ -f /etc/rhn/rhn.conf ] || fail "/etc/rhn/rhn.conf is missing"
version=$(cat /var/lib/pgsql/data/PG_VERSION 2>/dev/null || true)
[ "$version" = "$NEW_PG_VERSION" ] || fail "the database is PostgreSQL '$version', the server image needs $NEW_PG_VERSION"

kept=false
mkdir -p "$RELEASE_DIR"
for release in uyuni-release susemanager-release; do
  rm -f "$RELEASE_DIR/$release"
  if [ -f "/etc/$release" ]; then
    cp "/etc/$release" "$RELEASE_DIR/$release"
    echo "uyuni-post-upgrade: the data now belongs to: $(head -n 1 "/etc/$release")"
    kept=true
  fi
done
[ "$kept" = true ] || fail "the server image has no /etc/uyuni-release nor /etc/susemanager-release"
echo "uyuni-post-upgrade: done"
