# Waits until the database and the report database accept connections.
# Input: DB_HOSTS, the host names separated by spaces.
set -eu
for host in $DB_HOSTS; do
  until pg_isready -h "$host" -p 5432; do
    echo "waiting for the database at $host:5432"
    sleep 2
  done
done
