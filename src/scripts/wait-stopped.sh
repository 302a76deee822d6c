# wait-stopped: Jobs uyuni-stop-server and uyuni-stop-db wait until no pod of POD_SELECTOR is left in NAMESPACE, a
# terminating one included (a Deployment scaled to 0 no longer counts a pod that is still
# shutting down; the database's pod is still writing then). The stop steps run it between the
# server's stop and the database's, and after the database's: upstream stops the server first,
# then the database (uyuni-tools mgradm/shared/podman/startstop.go StopServices; docs/upstream.md).
# Input: NAMESPACE, POD_SELECTOR (label selector), STOP_WAIT_SECONDS (default 600), API_URL,
#   SA_DIR, SECRET_LABELS (lib/kube-api.sh; no Secret is written here). Fails when pods are left after STOP_WAIT_SECONDS.
set -eu
: "${NAMESPACE:?}" "${POD_SELECTOR:?}"
me=uyuni-wait-stopped

fail() {
  echo "$me: $*" >&2
  exit 1
}
case ${STOP_WAIT_SECONDS:-600} in '' | *[!0-9]*) fail "STOP_WAIT_SECONDS is not a number of seconds: '${STOP_WAIT_SECONDS:-}'" ;; esac

# shellcheck source-path=SCRIPTDIR source=lib/kube-api.sh
. "$(dirname "$0")/lib/kube-api.sh"
# shellcheck source-path=SCRIPTDIR source=lib/backup-manifest.sh
. "$(dirname "$0")/lib/backup-manifest.sh"

wait_stopped "$NAMESPACE" "$POD_SELECTOR" "${STOP_WAIT_SECONDS:-600}"
echo "$me: no pod of $POD_SELECTOR is left"
