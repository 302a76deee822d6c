# uyuni-data-sync: copies an old Uyuni server's data over ssh into the new volumes, records facts
# about it for the later steps, and adapts the copied configuration to the container.
# Every value arrives as an environment variable; none is pasted into this text.
# Input: SOURCE_FQDN, SOURCE_USER, SOURCE_PORT (the old server and how to log in: the user runs
#   rsync through sudo), VOLUME_PATHS (the volume mount paths, space-separated), TARGET_ROOT (where
#   the volumes are mounted: <TARGET_ROOT><path>), OLD_PG_VERSION, NEW_PG_VERSION, MIGRATION_DIR
#   (the migration-data volume). The ssh key, config and known_hosts are mounted in /root/.ssh/.
set -eu
: "${SOURCE_FQDN:?}" "${SOURCE_USER:?}" "${SOURCE_PORT:?}" "${VOLUME_PATHS:?}"
: "${TARGET_ROOT:?}" "${OLD_PG_VERSION:?}" "${NEW_PG_VERSION:?}" "${MIGRATION_DIR:?}"
KEY=/root/.ssh/key

fail() {
  echo "uyuni-data-sync: $*" >&2
  exit 1
}

# Checked again here (the configuration checks them first): no value may become an ssh option.
case $SOURCE_FQDN in '' | -* | *[!A-Za-z0-9.-]*) fail "SOURCE_FQDN is not a host name" ;; esac
case $SOURCE_USER in '' | -* | *[!a-z0-9_.-]*) fail "SOURCE_USER is not a user name" ;; esac
case $SOURCE_PORT in '' | *[!0-9]*) fail "SOURCE_PORT is not a port number" ;; esac
case $OLD_PG_VERSION$NEW_PG_VERSION in '' | *[!0-9]*) fail "the PostgreSQL versions must be numbers" ;; esac

SSH="ssh -i $KEY -p $SOURCE_PORT -o BatchMode=yes -o StrictHostKeyChecking=yes"
remote() {
  $SSH -l "$SOURCE_USER" -- "$SOURCE_FQDN" "$@"
}

echo "uyuni-data-sync: connecting to $SOURCE_USER@$SOURCE_FQDN:$SOURCE_PORT"
remote true || fail "cannot log in over ssh: check the Secret uyuni-migration-key and the ConfigMap uyuni-migration-ssh (known_hosts must hold $SOURCE_FQDN)"

source_pg=$(remote sudo cat /var/lib/pgsql/data/PG_VERSION) || fail "cannot read /var/lib/pgsql/data/PG_VERSION on $SOURCE_FQDN"
if [ "$source_pg" != "$OLD_PG_VERSION" ]; then
  fail "$SOURCE_FQDN runs PostgreSQL $source_pg, the configuration says migration.postgresql.from: $OLD_PG_VERSION"
fi

# A consistent copy needs a quiet source: no service may write while rsync reads.
echo "uyuni-data-sync: stopping the services on $SOURCE_FQDN"
remote sudo spacewalk-service stop
remote sudo systemctl stop postgresql

# What not to copy into a volume: paths that are volumes of their own (copied there), state of
# the old host that means nothing in a container, and the pre-upgrade database of an earlier try.
exclude_list() {
  printf '%s\n' /lost+found
  for other in $VOLUME_PATHS; do
    other=${other%/}
    case $other in "$1"/?*) printf '%s\n' "/${other#"$1"/}" ;; esac
  done
  case $1 in
    /var/lib/pgsql) printf '%s\n' /data/postmaster.pid /data/postmaster.opts '/data-pg*' ;;
    /var/log) printf '%s\n' /journal ;;
    /var/cache) printf '%s\n' /zypp ;;
  esac
}

excludes=$(mktemp)
trap 'rm -f "$excludes"' EXIT
for path in $VOLUME_PATHS; do
  path=${path%/}
  target=$TARGET_ROOT$path
  if ! remote sudo test -e "$path"; then
    echo "uyuni-data-sync: $path: not on $SOURCE_FQDN, left empty"
    continue
  fi
  exclude_list "$path" >"$excludes"
  echo "uyuni-data-sync: copying $path (excluding: $(tr '\n' ' ' <"$excludes"))"
  mkdir -p "$target"
  rsync -avz --delete --exclude-from="$excludes" -e "$SSH" --rsync-path='sudo rsync' \
    "$SOURCE_USER@$SOURCE_FQDN:$path/" "$target/"
  if [ "$path" = /var/lib/pgsql ]; then
    synced_pg=$(cat "$target/data/PG_VERSION")
    if [ "$OLD_PG_VERSION" != "$NEW_PG_VERSION" ]; then
      # Moved aside at once: should anything start PostgreSQL $NEW_PG_VERSION on it before
      # pg_upgrade, it would stamp a newer catalog version and the old server could not start.
      echo "uyuni-data-sync: moving the PostgreSQL $OLD_PG_VERSION data to data-pg$OLD_PG_VERSION for the upgrade"
      rm -rf "$target/data-pg$OLD_PG_VERSION"
      mv "$target/data" "$target/data-pg$OLD_PG_VERSION"
    fi
  fi
done
[ -n "${synced_pg:-}" ] || fail "no PostgreSQL data was copied (is /var/lib/pgsql among VOLUME_PATHS?)"

# rhn.conf value by key, from the copied configuration.
conf=$TARGET_ROOT/etc/rhn/rhn.conf
[ -f "$conf" ] || fail "$SOURCE_FQDN has no /etc/rhn/rhn.conf: not an Uyuni server?"
conf_value() {
  sed -n "s/^[[:space:]]*$1[[:space:]]*=[[:space:]]*//p" "$conf" | tail -n 1 | sed 's/[[:space:]]*$//'
}

echo "uyuni-data-sync: recording the facts in $MIGRATION_DIR/data"
mkdir -p "$MIGRATION_DIR/source"
rm -f "$MIGRATION_DIR/source/uyuni-release" "$MIGRATION_DIR/source/susemanager-release"
for release in uyuni-release susemanager-release; do
  if remote test -f "/etc/$release"; then
    remote cat "/etc/$release" >"$MIGRATION_DIR/source/$release"
  fi
done
timezone=$(remote timedatectl show --property=Timezone --value 2>/dev/null) || timezone=
if remote rpm -q --quiet hub-xmlrpc-api; then has_hub=true; else has_hub=false; fi
debug_java=false
for f in "$TARGET_ROOT"/etc/tomcat/conf.d/*.conf "$TARGET_ROOT/etc/rhn/taskomatic.conf"; do
  if [ -f "$f" ] && grep -q -e '-agentlib:jdwp' "$f"; then debug_java=true; fi
done
fqdn=$(conf_value java.hostname)
[ -n "$fqdn" ] || fqdn=$(conf_value server.jabber_server)
{
  echo "source_fqdn=$SOURCE_FQDN"
  echo "fqdn=$fqdn"
  echo "timezone=$timezone"
  echo "current_pg_version=$synced_pg"
  echo "db_user=$(conf_value db_user)"
  echo "db_name=$(conf_value db_name)"
  echo "db_port=$(conf_value db_port)"
  echo "has_hub=$has_hub"
  echo "debug_java=$debug_java"
} >"$MIGRATION_DIR/data.new"
mv "$MIGRATION_DIR/data.new" "$MIGRATION_DIR/data"
cat "$MIGRATION_DIR/data"

# The databases run in the db Deployment, behind the Services db and reportdb; the container
# names itself by java.hostname.
echo "uyuni-data-sync: adapting rhn.conf to the container"
set_conf() {
  if grep -q "^[[:space:]]*$1[[:space:]]*=" "$conf"; then
    sed -i "s/^\([[:space:]]*$1[[:space:]]*=\).*\$/\1 $2/" "$conf"
  else
    [ -z "$(tail -c 1 "$conf")" ] || echo >>"$conf"
    printf '%s = %s\n' "$1" "$2" >>"$conf"
  fi
}
set_conf db_host db
set_conf report_db_host reportdb
if ! grep -q '^[[:space:]]*java\.hostname[[:space:]]*=' "$conf"; then
  sed -i 's/^\([[:space:]]*\)server\.jabber_server\([[:space:]]*=\)/\1java.hostname\2/' "$conf"
fi
cobbler=$TARGET_ROOT/etc/cobbler/settings.yaml
if [ -f "$cobbler" ]; then
  sed -i 's/^client_use_localhost:[[:space:]]*false/client_use_localhost: true/' "$cobbler"
fi
taskomatic=$TARGET_ROOT/etc/rhn/taskomatic.conf
if [ -f "$taskomatic" ]; then
  sed -i 's/address=[^:]*:/address=*:/' "$taskomatic"
fi
# The server container sets itself up at its first start unless it finds this marker.
echo "uyuni-data-sync: marking the copied server as set up"
mkdir -p "$TARGET_ROOT/var/spacewalk"
touch "$TARGET_ROOT/var/spacewalk/.MANAGER_SETUP_COMPLETE"
echo "uyuni-data-sync: done"
