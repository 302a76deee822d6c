# db-data-dir: the db pod's init container, in the server-postgresql image, as root, before the
# image's entrypoint. A fresh ext4 claim holds lost+found, and initdb refuses a data directory
# that is not empty ("It contains a lost+found directory, perhaps due to it being a mount point"):
# the image's entrypoint (uyuni-entrypoint.sh) runs initdb in PGDATA, the claim's root (the chart
# mounts the claim at /var/lib/pgsql/data), when PG_VERSION is missing. So, on a claim that holds
# no database yet, an empty lost+found is removed (e2fsck recreates it when it needs one); a
# lost+found with files in it (a repaired file system) stops the pod and says so. A claim with a
# database is never touched.
# Input: PGDATA (the claim's mount, e.g. /var/lib/pgsql/data).
set -eu
: "${PGDATA:?}"
data=${PGDATA%/}

fail() {
  echo "db-data-dir: $*" >&2
  exit 1
}

[ -d "$data" ] || fail "the database claim is not mounted at $data"
if [ -f "$data/PG_VERSION" ]; then
  echo "db-data-dir: $data holds PostgreSQL $(head -n 1 "$data/PG_VERSION"), left as it is"
  exit 0
fi
if [ -d "$data/lost+found" ]; then
  if [ -n "$(find "$data/lost+found" -mindepth 1 -maxdepth 1 | head -n 1)" ]; then
    fail "$data/lost+found holds files (the file system was repaired): look at them, move them off the claim and remove lost+found, then restart the pod"
  fi
  rmdir "$data/lost+found"
  echo "db-data-dir: removed the empty lost+found of the new volume, so initdb can use $data"
fi
echo "db-data-dir: $data is ready for the database's first start"
