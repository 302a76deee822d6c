# uyuni-inspect-db: prints, as key=value lines, the PostgreSQL facts the next steps' gates decide
# on, in the new server-postgresql image with the current database claim mounted read-only at
# DATA_DIR. The runtime keeps every such line of this Job's log as a fact.
# - current_pg_version: the major version of the data, from DATA_DIR/PG_VERSION, or from
#   DATA_DIR/data/PG_VERSION (the older layout: the server container held PostgreSQL at
#   /var/lib/pgsql, with the data below in data/), or from DATA_DIR/data-pg<N>/PG_VERSION (where
#   uyuni-data-sync moves a migrated database whose major changes); no fact, and a message, when
#   none exists;
# - image_pg_version: the major version of the image's PostgreSQL, from `postgres -V`, else the
#   highest PG_LIB_DIR/postgresql<N>/bin/postgres.
# Input: DATA_DIR (where the database claim is mounted), PG_LIB_DIR (default /usr/lib).
set -eu
: "${DATA_DIR:?}"
data=${DATA_DIR%/}
lib=${PG_LIB_DIR:-/usr/lib}

if [ -f "$data/PG_VERSION" ]; then
  echo "current_pg_version=$(head -n 1 "$data/PG_VERSION")"
elif [ -f "$data/data/PG_VERSION" ]; then
  echo "current_pg_version=$(head -n 1 "$data/data/PG_VERSION")"
else
  moved=
  for f in "$data"/data-pg*/PG_VERSION; do
    [ -f "$f" ] && moved=$f
  done
  if [ -n "$moved" ]; then
    echo "current_pg_version=$(head -n 1 "$moved")"
  else
    echo "uyuni-inspect-db: none of $data/PG_VERSION, $data/data/PG_VERSION, $data/data-pg*/PG_VERSION exists: no database data" >&2
  fi
fi

# "postgres (PostgreSQL) 18.1" gives 18.
image_pg=$(postgres -V 2>/dev/null | sed -n 's/^.*(PostgreSQL)[[:space:]]*\([0-9][0-9]*\).*$/\1/p' | head -n 1) || image_pg=
if [ -z "$image_pg" ]; then
  for server in "$lib"/postgresql*/bin/postgres; do
    [ -x "$server" ] || continue
    n=${server#"$lib"/postgresql}
    n=${n%/bin/postgres}
    case $n in '' | *[!0-9]*) continue ;; esac
    if [ -z "$image_pg" ] || [ "$n" -gt "$image_pg" ]; then image_pg=$n; fi
  done
fi
if [ -n "$image_pg" ]; then
  echo "image_pg_version=$image_pg"
else
  echo "uyuni-inspect-db: cannot tell the image's PostgreSQL version: no postgres on PATH, none in $lib/postgresql<N>/bin" >&2
fi
