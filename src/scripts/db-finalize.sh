# uyuni-db-finalize: brings the database up to the new server once, in the new server image with
# the server claims mounted, the db Deployment running and the server stopped.
# - It runs the image's own finalize script. The current one (uyuni server-image
#   root/docker-entrypoint-init.d/90-pgsqlFinalize.sh @ 17708150) reads no switch: it compares
#   pg_collation.collversion with pg_collation_actual_version() for MANAGER_DB_NAME and, when they
#   differ, reindexes and refreshes the collation versions by itself. The server runs it at every
#   start too; run here first, the hours a REINDEX can take are a step of their own.
# - For a migration (MIGRATION_DIR set) it then does what that script's MIGRATION block did up to
#   @ d701b96b and no longer does: it points rhnKickstartableTree.base_path at where
#   uyuni-data-sync copied each distribution (its distributions.csv: target, old base_path, new
#   path) and queues the system overview refresh, in one transaction, once (a marker on
#   migration-data records it; a re-run after that changes nothing).
# Input: FINALIZE_SCRIPT (default /docker-entrypoint-init.d/90-pgsqlFinalize.sh), MIGRATION_DIR
#   (optional: the migration-data claim), MANAGER_DB_HOST, MANAGER_DB_PORT, MANAGER_DB_NAME,
#   MANAGER_USER, MANAGER_PASS (the server's environment: the product database and its owner).
set -eu
finalize=${FINALIZE_SCRIPT:-/docker-entrypoint-init.d/90-pgsqlFinalize.sh}

fail() {
  echo "uyuni-db-finalize: $*" >&2
  exit 1
}

[ -x "$finalize" ] || fail "the finalize script $finalize is missing or not executable: is this the server image?"
if [ -n "${MIGRATION_DIR:-}" ]; then
  : "${MANAGER_DB_HOST:?}" "${MANAGER_DB_PORT:?}" "${MANAGER_DB_NAME:?}" "${MANAGER_USER:?}" "${MANAGER_PASS:?}"
  distributions=$MIGRATION_DIR/distributions.csv
  done_marker=$MIGRATION_DIR/.db-finalized
  [ -f "$distributions" ] || [ -f "$done_marker" ] || fail "$distributions is missing: did uyuni-data-sync run?"
fi

echo "uyuni-db-finalize: running $finalize (it reindexes when the collation versions changed)"
status=0
"$finalize" || status=$?
if [ "$status" -ne 0 ]; then
  echo "uyuni-db-finalize: $finalize failed (status $status)" >&2
  exit "$status"
fi

if [ -n "${MIGRATION_DIR:-}" ]; then
  if [ -f "$done_marker" ]; then
    echo "uyuni-db-finalize: the distributions were pointed at their new places before ($done_marker), nothing to do"
  else
    echo "uyuni-db-finalize: pointing the auto-installable distributions at their copies ($(wc -l <"$distributions") in $distributions)"
    # One transaction: the paths and the queued refresh, or nothing. The list comes on stdin.
    PGHOST=$MANAGER_DB_HOST PGPORT=$MANAGER_DB_PORT PGDATABASE=$MANAGER_DB_NAME PGUSER=$MANAGER_USER PGPASSWORD=$MANAGER_PASS \
      psql -X -q -v ON_ERROR_STOP=1 --single-transaction \
      -c 'CREATE TEMP TABLE uyuni_cdk_distributions (target text, base_path text, new_path text) ON COMMIT DROP' \
      -c '\copy uyuni_cdk_distributions FROM pstdin WITH (FORMAT csv)' \
      -c 'UPDATE rhnKickstartableTree t SET base_path = d.new_path FROM uyuni_cdk_distributions d WHERE t.base_path = d.base_path' \
      -c "INSERT INTO rhnTaskQueue (id, org_id, task_name, task_data)
            SELECT nextval('rhn_task_queue_id_seq'), 1, 'update_system_overview', s.id FROM rhnServer s
            WHERE NOT EXISTS (SELECT 1 FROM rhnTaskoRun r JOIN rhnTaskoTemplate t ON r.template_id = t.id
              JOIN rhnTaskoBunch b ON t.bunch_id = b.id WHERE b.name = 'update-system-overview-bunch')" \
      <"$distributions" || fail "the distributions' paths could not be rewritten in $MANAGER_DB_NAME (nothing was changed)"
    touch "$done_marker"
    echo "uyuni-db-finalize: distributions rewritten, system overview refresh queued"
  fi
fi
echo "uyuni-db-finalize: done"
