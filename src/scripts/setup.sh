# uyuni-setup: the first-time setup of the server, run once by the install plan.
# Credentials arrive as environment variables from Secrets (ADMIN_*, MANAGER_*, REPORT_DB_*,
# SCC_*); the FQDN, timezone and database hosts as plain variables. Nothing is pasted in here.
set -eu
: "${UYUNI_FQDN:?}" "${ADMIN_USER:?}" "${ADMIN_PASS:?}" "${MANAGER_USER:?}" "${MANAGER_PASS:?}"
: "${REPORT_DB_USER:?}" "${REPORT_DB_PASS:?}" "${RELEASE_DIR:?}"

if [ -f /root/.MANAGER_SETUP_COMPLETE ]; then
  echo "uyuni-setup: already set up, nothing to do"
  exit 0
fi

echo "uyuni-setup: setting up $UYUNI_FQDN (database on ${MANAGER_DB_HOST:-localhost})"
export UYUNI_FQDN MANAGER_USER MANAGER_PASS REPORT_DB_USER REPORT_DB_PASS
export MANAGER_DB_HOST="${MANAGER_DB_HOST:-localhost}" REPORT_DB_HOST="${REPORT_DB_HOST:-localhost}"
export MANAGER_DB_PORT=5432 REPORT_DB_PORT=5432
export MANAGER_ADMIN_EMAIL="${ADMIN_EMAIL:-admin@$UYUNI_FQDN}"
/usr/lib/susemanager/bin/mgr-setup -s -n

echo "uyuni-setup: creating the first user $ADMIN_USER"
curl --silent --fail --output /dev/null \
  --data-urlencode "orgName=${ORG_NAME:-Uyuni}" \
  --data-urlencode "adminLogin=$ADMIN_USER" \
  --data-urlencode "adminPassword=$ADMIN_PASS" \
  --data-urlencode "firstName=Administrator" \
  --data-urlencode "lastName=Uyuni" \
  --data-urlencode "email=$MANAGER_ADMIN_EMAIL" \
  "http://localhost/rhn/manager/api/org/createFirst"
# Record which product and release the data belongs to, for the next upgrade's inspection.
mkdir -p "$RELEASE_DIR"
for release in uyuni-release susemanager-release; do
  if [ -f "/etc/$release" ]; then
    cp "/etc/$release" "$RELEASE_DIR/$release"
  fi
done
touch /root/.MANAGER_SETUP_COMPLETE
echo "uyuni-setup: done"
