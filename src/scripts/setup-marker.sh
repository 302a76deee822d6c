# uyuni-setup-marker: moves the setup's completion marker of an install made before server 5.2.5
# from the root claim to var-spacewalk, in the server image, with the server stopped. The current
# server image looks for /var/spacewalk/.MANAGER_SETUP_COMPLETE and moves a legacy
# /root/.MANAGER_SETUP_COMPLETE there only when /root holds it (entrypoint-lib.sh
# check_current_installation @ 18abb310); the current Deployment mounts no /root, so without this
# move 00-mgrSetup.sh would set the server up again on the live database (spacewalk-setup
# --clear-db, @ 1a7da357). The marker must be at its new place afterwards, or this Job fails.
# Input: SETUP_MARKER (e.g. /var/spacewalk/.MANAGER_SETUP_COMPLETE), LEGACY_SETUP_MARKER (e.g.
#   /root/.MANAGER_SETUP_COMPLETE), both as mounted here.
set -eu
: "${SETUP_MARKER:?}" "${LEGACY_SETUP_MARKER:?}"

fail() {
  echo "uyuni-setup-marker: $*" >&2
  exit 1
}

[ -d "${SETUP_MARKER%/*}" ] || fail "the var-spacewalk claim is not mounted at ${SETUP_MARKER%/*}"
if [ -e "$LEGACY_SETUP_MARKER" ]; then
  echo "uyuni-setup-marker: moving $LEGACY_SETUP_MARKER to $SETUP_MARKER"
  mv "$LEGACY_SETUP_MARKER" "$SETUP_MARKER"
fi
[ -e "$SETUP_MARKER" ] || fail "no setup marker at $SETUP_MARKER nor $LEGACY_SETUP_MARKER: the new server would set itself up again on the live database; nothing was changed"
echo "uyuni-setup-marker: the server is marked as set up ($SETUP_MARKER)"
