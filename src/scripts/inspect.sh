# uyuni-inspect: prints, as key=value lines, the facts the next steps' gates decide on. The
# runtime keeps every such line of this Job's log as a fact; anything else is chatter.
# - the new image: product, uyuni_release (its release), image_pg_version;
# - the data: from the migration data (MIGRATION_DATA, written by uyuni-data-sync) when set,
#   else from the volumes: current_pg_version (PG_VERSION), fqdn, db_user, db_name, db_port
#   (rhn.conf), current_product and current_release (the release files uyuni-post-upgrade keeps
#   in RELEASE_DIR).
# Input: RELEASE_DIR, MIGRATION_DATA (optional). Never prints a password.
set -eu
: "${RELEASE_DIR:?}"

# The release of a *-release file: "Uyuni release 2025.10" gives 2025.10, "SUSE Manager
# release 5.0 (5.0.3)" gives 5.0.3 (the detailed version in parentheses wins).
release_of() {
  line=$(head -n 1 "$1")
  detail=$(printf '%s\n' "$line" | sed -n 's/^[^(]*(\([0-9][^)]*\)).*$/\1/p')
  if [ -n "$detail" ]; then
    printf '%s\n' "$detail"
  else
    printf '%s\n' "$line" | sed -n 's/^.*[Rr]elease[[:space:]]*\([0-9][^(]*\).*$/\1/p' | sed 's/[[:space:]]*$//'
  fi
}

# Prints <product key>=uyuni|suse-manager and <release key>=<release> for the release files in $1.
describe_release() {
  if [ -f "$1/uyuni-release" ]; then
    echo "$2=uyuni"
    echo "$3=$(release_of "$1/uyuni-release")"
  elif [ -f "$1/susemanager-release" ]; then
    echo "$2=suse-manager"
    echo "$3=$(release_of "$1/susemanager-release")"
  else
    echo "uyuni-inspect: no release file in $1" >&2
  fi
}

describe_release /etc product uyuni_release
image_pg=$(rpm -qa --queryformat '%{NAME}\n' | sed -n 's/^postgresql\([0-9][0-9]*\)-server$/\1/p' | sort -n | tail -n 1)
echo "image_pg_version=$image_pg"

if [ -n "${MIGRATION_DATA:-}" ]; then
  [ -f "$MIGRATION_DATA" ] || { echo "uyuni-inspect: $MIGRATION_DATA is missing: did uyuni-data-sync run?" >&2; exit 1; }
  # Only well-formed fact lines, and never anything that looks like a secret.
  grep -E '^[a-z_]+=' "$MIGRATION_DATA" | grep -v -i -E '^[a-z_]*(pass|secret|key)[a-z_]*=' || true
  describe_release "$(dirname "$MIGRATION_DATA")/source" current_product current_release
  exit 0
fi

pg_version_file=/var/lib/pgsql/data/PG_VERSION
if [ -f "$pg_version_file" ]; then
  echo "current_pg_version=$(cat "$pg_version_file")"
else
  echo "uyuni-inspect: $pg_version_file is missing: no database data" >&2
fi
conf=/etc/rhn/rhn.conf
conf_value() {
  sed -n "s/^[[:space:]]*$1[[:space:]]*=[[:space:]]*//p" "$conf" | tail -n 1 | sed 's/[[:space:]]*$//'
}
if [ -f "$conf" ]; then
  echo "fqdn=$(conf_value java.hostname)"
  echo "db_user=$(conf_value db_user)"
  echo "db_name=$(conf_value db_name)"
  echo "db_port=$(conf_value db_port)"
else
  echo "uyuni-inspect: $conf is missing" >&2
fi
describe_release "$RELEASE_DIR" current_product current_release
