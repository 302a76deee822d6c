# uyuni-restore-check: the facts a restore's gates decide on, changing nothing. With the backup
# claim mounted read-only at BACKUP_DIR: the backup restore.from names (FROM: latest or an id) is
# complete and every file matches its manifest (else the Job fails, before anything is stopped);
# it prints backup_id, backup_created, backup_fqdn, backup_product, backup_release,
# backup_pg_version, backup_tls_mode, backup_verified=true, and the new server image's product
# and uyuni_release (its release file in IMAGE_ETC, as uyuni-inspect reads it), and the facts of
# the backup's record against this restore (lib/backup-record.sh: record_ok, record_refusal, the
# image and configuration differences). With TARGETS=true
# (after the server is stopped, every claim mounted read-only at CLAIMS_DIR/<claim>): whether
# the claims are empty (target_empty=true|false, target_with_data=<claims>) and whether each has
# room for its archive (else the Job fails, naming the claim).
# Input: BACKUP_DIR, FROM, IMAGE_ETC (default /etc), TARGETS (true|false, default false),
#   CONFIGURATION, CURRENT_IMAGES, IGNORED, ALLOW_NEWER_IMAGES, ALLOW_CONFIG_CHANGES,
#   ALLOW_MISSING_RECORD (without TARGETS: lib/backup-record.sh's compare),
#   CLAIMS_DIR (with TARGETS=true), FORCE (with TARGETS=true: claims that hold data are replaced,
#   so their space counts as free).
set -eu
: "${BACKUP_DIR:?}" "${FROM:?}"
me=uyuni-restore-check
image_etc=${IMAGE_ETC:-/etc}

fail() {
  echo "$me: $*" >&2
  exit 1
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# shellcheck source-path=SCRIPTDIR source=lib/backup-manifest.sh
. "$(dirname "$0")/lib/backup-manifest.sh"
# shellcheck source-path=SCRIPTDIR source=lib/release.sh
. "$(dirname "$0")/lib/release.sh"
# shellcheck source-path=SCRIPTDIR source=lib/backup-record.sh
. "$(dirname "$0")/lib/backup-record.sh"

dir=$(resolve_backup "$FROM" "${BACKUP_DIR%/}")
if [ "${TARGETS:-false}" = true ]; then
  : "${CLAIMS_DIR:?}"
  manifest_check "$dir"
  check_targets "$dir" "$CLAIMS_DIR" "${FORCE:-false}"
  if [ -s "$work/with-data" ]; then
    echo "$me: these claims hold data, a restore replaces it: $(tr '\n' ' ' <"$work/with-data")"
    echo "target_empty=false"
    echo "target_with_data=$(paste -s -d ' ' "$work/with-data")"
  else
    echo "target_empty=true"
  fi
  exit 0
fi

verify_backup "$dir"
for k in id created fqdn product release pgVersion tlsMode; do
  key=$(printf '%s' "$k" | sed 's/V/_v/; s/M/_m/')
  echo "backup_$key=$(manifest_value "$dir" "$k")"
done
echo "backup_verified=true"

# What the backup was taken with against what this restore would run (lib/backup-record.sh):
# record_ok and, when it refuses, record_refusal, with every difference. A record that is there
# but cannot be read fails the Job: it is never taken for a missing one.
if [ -n "$(manifest_entries "$dir" record)" ]; then listed=true; else listed=false; fi
record_py compare "$dir" "$listed"

# The new image's release, as uyuni-inspect reads it.
describe_release "$image_etc" product uyuni_release "is this the server image?"
