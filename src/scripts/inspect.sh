# uyuni-inspect: prints, as key=value lines, the facts the next steps' gates decide on, in the new
# server image with the etc-rhn claim mounted read-only at /etc/rhn. The runtime keeps every such
# line of this Job's log as a fact; anything else is chatter. The PostgreSQL facts come from
# uyuni-inspect-db (inspect-db.sh), in the database image.
# - the new image: product (uyuni|suse-manager) and uyuni_release, from its release file;
# - the data: current_product and current_release (the release files init-volumes keeps in
#   RELEASE_DIR), fqdn (java.hostname), db_user, db_name, db_port (rhn.conf);
# - or, for a migration (MIGRATION_DATA set), the facts uyuni-data-sync wrote there, and
#   current_product and current_release from the old server's release files beside it (source/).
# - the data (upgrade): setup_marker, where the setup's completion marker was found: the current
#   place (SETUP_MARKER) or the legacy one on the root claim of installs before server 5.2.5
#   (LEGACY_SETUP_MARKER); absent when there is none, so the gate refuses (the server would set
#   itself up again on the live database);
# - the running TLS (upgrade, when CA_CERT is set): ca_fingerprint, the SHA-256 fingerprint of the
#   CA certificate Secret uyuni-cert carries now (what every client trusts).
# Input: RELEASE_DIR (e.g. /etc/rhn/uyuni-cdk), IMAGE_ETC (where the image's release file is,
#   default /etc), RHN_CONF (default /etc/rhn/rhn.conf), MIGRATION_DATA (optional: the data file
#   of uyuni-data-sync), SETUP_MARKER and LEGACY_SETUP_MARKER (optional: the marker's paths as
#   mounted here), CA_CERT (optional: uyuni-cert's ca.crt as mounted here). Never prints a password.
set -eu
: "${RELEASE_DIR:?}"
image_etc=${IMAGE_ETC:-/etc}
conf=${RHN_CONF:-/etc/rhn/rhn.conf}

me=uyuni-inspect
# shellcheck source-path=SCRIPTDIR source=lib/release.sh
. "$(dirname "$0")/lib/release.sh"

describe_release "$image_etc" product uyuni_release

if [ -n "${MIGRATION_DATA:-}" ]; then
  [ -f "$MIGRATION_DATA" ] || { echo "uyuni-inspect: $MIGRATION_DATA is missing: did uyuni-data-sync run?" >&2; exit 1; }
  # Only well-formed fact lines, and never anything that looks like a secret.
  grep -E '^[a-z_]+=' "$MIGRATION_DATA" | grep -v -i -E '^[a-z_]*(pass|secret|key)[a-z_]*=' || true
  describe_release "$(dirname "$MIGRATION_DATA")/source" current_product current_release
  exit 0
fi

# rhn.conf value by key (the last one wins, as for the server).
conf_value() {
  sed -n "s/^[[:space:]]*$1[[:space:]]*=[[:space:]]*//p" "$conf" | tail -n 1 | sed 's/[[:space:]]*$//'
}
if [ -f "$conf" ]; then
  echo "fqdn=$(conf_value 'java\.hostname')"
  echo "db_user=$(conf_value db_user)"
  echo "db_name=$(conf_value db_name)"
  echo "db_port=$(conf_value db_port)"
else
  echo "uyuni-inspect: $conf is missing" >&2
fi
describe_release "$RELEASE_DIR" current_product current_release

if [ -n "${SETUP_MARKER:-}" ]; then
  if [ -e "$SETUP_MARKER" ]; then
    echo "setup_marker=$SETUP_MARKER"
  elif [ -n "${LEGACY_SETUP_MARKER:-}" ] && [ -e "$LEGACY_SETUP_MARKER" ]; then
    echo "setup_marker=$LEGACY_SETUP_MARKER"
  else
    echo "uyuni-inspect: no setup marker at $SETUP_MARKER${LEGACY_SETUP_MARKER:+ nor $LEGACY_SETUP_MARKER}" >&2
  fi
fi
if [ -n "${CA_CERT:-}" ]; then
  if [ -s "$CA_CERT" ] && fp=$(openssl x509 -in "$CA_CERT" -noout -fingerprint -sha256 2>/dev/null); then
    echo "ca_fingerprint=${fp#*=}"
  else
    echo "uyuni-inspect: no CA certificate in $CA_CERT (Secret uyuni-cert's ca.crt)" >&2
  fi
fi
