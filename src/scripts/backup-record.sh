# uyuni-backup-record: what the backup is taken with, recorded while the server still runs (the
# step before stop-server): each pod of POD_SELECTOR with its containers' image and imageID as
# the API reports them, the synthesized configuration (CONFIGURATION, JSON) and the server's
# identity (key identity of ConfigMap HISTORY_CONFIGMAP), written whole to BACKUP_DIR/.record.json
# (lib/backup-record.sh), which uyuni-backup then moves into the new backup as record.json. A
# failure (the API unreachable, a Role missing, a damaged identity) fails the Job, and the run
# stops before anything is stopped.
# Input: NAMESPACE, POD_SELECTOR, CONFIGURATION, BACKUP_DIR, HISTORY_CONFIGMAP (default
#   uyuni-cdk-history), API_URL, SA_DIR (the pod's service account).
set -eu
: "${NAMESPACE:?}" "${POD_SELECTOR:?}" "${CONFIGURATION:?}" "${BACKUP_DIR:?}"
me=uyuni-backup-record

fail() {
  echo "$me: $*" >&2
  exit 1
}

# shellcheck source-path=SCRIPTDIR source=lib/backup-record.sh
. "$(dirname "$0")/lib/backup-record.sh"

backups=${BACKUP_DIR%/}
{ [ -d "$backups" ] && [ -w "$backups" ]; } || fail "the backup claim is not mounted writable at $backups"
record_py write "$backups/$record_pending"
