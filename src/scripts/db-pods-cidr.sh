# db-pods-cidr: an init container of the db pod, in the server-postgresql image, as root, before
# the image's entrypoint. It writes db.podsCIDR into $PGDATA/pg_hba_custom.conf, the file the
# image's pg_hba.conf includes first (01-pg_hba.sh @ 5387ff36: `include_if_exists
# pg_hba_custom.conf`, "To add custom rules, use pg_hba_custom.conf"), as a marked block of ours
# at its end: the rest of the file (the user's rules) is kept as it is, and the block is replaced,
# never added twice. The block repeats the image's refusal of plain text through Traefik before
# the network's rule, as 01-pg_hba.sh orders its own pod-network rule (Traefik's pods are in the
# pod network too). PostgreSQL reads the file when it starts, so the rule holds from this start
# on; on a claim without a database nothing is written (initdb needs an empty directory). The
# block is lib/marked-block.sh's, as db-archiving.sh's.
# Input: PGDATA (the claim's mount, e.g. /var/lib/pgsql/data); PODS_CIDR (db.podsCIDR, an IPv4
#   or IPv6 network, e.g. 10.42.0.0/16); REPLICATION (optional, `on` with db.archiving: the
#   network may also open replication connections, scram-sha-256, for plan db-basebackup's
#   pg_basebackup; only roles with REPLICATION, the administrator, can use them).
set -eu
# shellcheck source-path=SCRIPTDIR source=lib/marked-block.sh
. "$(dirname "$0")/lib/marked-block.sh"
: "${PGDATA:?}"
: "${PODS_CIDR:?}"
data=${PGDATA%/}
file=$data/pg_hba_custom.conf
begin='# BEGIN uyuni-cdk db.podsCIDR: rewritten at every start of the db pod, change db.podsCIDR instead'
end='# END uyuni-cdk db.podsCIDR'

fail() {
  echo "db-pods-cidr: $*" >&2
  exit 1
}

# Only what a CIDR is made of: anything else could add rules of its own to pg_hba.conf.
case $PODS_CIDR in
  */* ) ;;
  * ) fail "PODS_CIDR '$PODS_CIDR' is not a network in CIDR notation" ;;
esac
case $PODS_CIDR in
  *[!0-9a-fA-F.:/]* ) fail "PODS_CIDR '$PODS_CIDR' is not a network in CIDR notation" ;;
esac
[ -d "$data" ] || fail "the database claim is not mounted at $data"
if [ ! -f "$data/PG_VERSION" ]; then
  echo "db-pods-cidr: $data holds no database yet, nothing written"
  exit 0
fi

body=$(printf '%s\n' \
  'hostssl reportdb all .kube-system.svc.cluster.local scram-sha-256' \
  'host all all .kube-system.svc.cluster.local reject' \
  "host all all $PODS_CIDR scram-sha-256")
if [ "${REPLICATION:-}" = on ]; then
  body=$(printf '%s\n' "$body" "host replication all $PODS_CIDR scram-sha-256")
fi
state=$(write_marked_block "$file" "$begin" "$end" "$body") || fail "could not write $file"
case $state in
  unchanged )
    echo "db-pods-cidr: $file already allows $PODS_CIDR"
    exit 0
    ;;
  created )
    # PostgreSQL's user, whoever owns the cluster, reads it.
    chown "$(stat -c %u:%g "$data/PG_VERSION")" "$file"
    chmod 0600 "$file"
    ;;
esac
echo "db-pods-cidr: $file allows $PODS_CIDR with scram-sha-256 from this start of PostgreSQL on"
