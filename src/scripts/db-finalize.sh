# uyuni-db-finalize: brings the database up to the new server, in the new server image with the
# server claims mounted and the db Deployment running, by running the image's own finalize script
# once. That script reads RUN_REINDEX (REINDEX and refreshing the collation versions, after a
# migration or a libc change), RUN_SCHEMA_UPDATE (the schema check and upgrade) and MIGRATION
# (the migration's rewrite of the distribution paths). This can run for hours on a large database.
# Input: RUN_REINDEX, RUN_SCHEMA_UPDATE, MIGRATION (true|false each), FINALIZE_SCRIPT (default
#   /docker-entrypoint-init.d/90-pgsqlFinalize.sh).
set -eu
finalize=${FINALIZE_SCRIPT:-/docker-entrypoint-init.d/90-pgsqlFinalize.sh}

fail() {
  echo "uyuni-db-finalize: $*" >&2
  exit 1
}

case ${RUN_REINDEX:-} in true | false) ;; *) fail "RUN_REINDEX must be true or false, not '${RUN_REINDEX:-}'" ;; esac
case ${RUN_SCHEMA_UPDATE:-} in true | false) ;; *) fail "RUN_SCHEMA_UPDATE must be true or false, not '${RUN_SCHEMA_UPDATE:-}'" ;; esac
case ${MIGRATION:-} in true | false) ;; *) fail "MIGRATION must be true or false, not '${MIGRATION:-}'" ;; esac
[ -x "$finalize" ] || fail "the finalize script $finalize is missing or not executable: is this the server image?"
export RUN_REINDEX RUN_SCHEMA_UPDATE MIGRATION

echo "uyuni-db-finalize: running $finalize (RUN_REINDEX=$RUN_REINDEX RUN_SCHEMA_UPDATE=$RUN_SCHEMA_UPDATE MIGRATION=$MIGRATION)"
status=0
"$finalize" || status=$?
if [ "$status" -ne 0 ]; then
  echo "uyuni-db-finalize: $finalize failed (status $status)" >&2
  exit "$status"
fi
echo "uyuni-db-finalize: done"
