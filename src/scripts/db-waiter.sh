# db-waiter: an init container of the server pod, in the server image: waits until the product
# database and then the report database accept connections (pg_isready), so the server does not
# start without them. It waits as long as it takes: the pod's own timeouts bound it.
# Input: MANAGER_USER, MANAGER_DB_HOST, MANAGER_DB_PORT, MANAGER_DB_NAME (the product database),
#   REPORT_DB_USER, REPORT_DB_HOST, REPORT_DB_PORT, REPORT_DB_NAME (the report database),
#   DB_WAIT_INTERVAL (seconds between two tries, default 5).
set -eu
: "${MANAGER_USER:?}" "${MANAGER_DB_HOST:?}" "${MANAGER_DB_PORT:?}" "${MANAGER_DB_NAME:?}"
: "${REPORT_DB_USER:?}" "${REPORT_DB_HOST:?}" "${REPORT_DB_PORT:?}" "${REPORT_DB_NAME:?}"
interval=${DB_WAIT_INTERVAL:-5}
case $interval in '' | *[!0-9.]* | *.*.*) echo "db-waiter: DB_WAIT_INTERVAL is not a number of seconds: '$interval'" >&2; exit 1 ;; esac

# wait_for <what> <user> <host> <port> <database>
wait_for() {
  until pg_isready -U "$2" -h "$3" -p "$4" -d "$5"; do
    echo "db-waiter: waiting for the $1 ($5 at $3:$4)"
    sleep "$interval"
  done
  echo "db-waiter: the $1 ($5 at $3:$4) accepts connections"
}

wait_for "product database" "$MANAGER_USER" "$MANAGER_DB_HOST" "$MANAGER_DB_PORT" "$MANAGER_DB_NAME"
wait_for "report database" "$REPORT_DB_USER" "$REPORT_DB_HOST" "$REPORT_DB_PORT" "$REPORT_DB_NAME"
