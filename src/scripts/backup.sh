# uyuni-backup: one new backup of the stopped server on the backup claim (BACKUP_DIR/<id>/):
# claims/<claim>.tar for every claim of CLAIMS (each mounted read-only at CLAIMS_DIR/<claim>; the
# database claim DB_CLAIM is the cold copy of a PostgreSQL that was shut down, so it is
# consistent as it lies), identity.json (fqdn, images, TLS mode, release), record.json (what it
# was taken with: lib/backup-record.sh, left on the claim by uyuni-backup-record), secrets/<name>.json for
# every Secret of SECRETS (read through the API with the pod's service account; mode 0600), and
# manifest.json last, with the size and sha256 of every file. It waits until no server or database
# pod is left (a terminating pod still writes), checks the free space before it writes, copies
# into <id>.part and renames it to <id> once the manifest is written, so a backup directory
# without .part is complete. Progress per claim: N/M, bytes and rate.
# The Job never fails for a failed copy: it prints backup_ok=false and backup_error=<why>
# (facts), removes the partial copy and exits 0, so the plan's next step starts the server again;
# the step after that refuses on backup_ok (docs/backup.md). On success: backup_ok=true,
# backup_id, backup_bytes.
# Input: CLAIMS (claim names, blank-separated), CLAIMS_DIR (where they are mounted), DB_CLAIM,
#   BACKUP_DIR (the backup claim), FQDN, SERVER_IMAGE, DB_IMAGE, IMAGE_TAG, TLS_MODE (what
#   identity.json records), RELEASE_DIR (the release files the server's init-volumes keeps, inside
#   CLAIMS_DIR), SECRETS (Secret names), POD_SELECTOR (label selector of the pods that must be
#   gone), STOP_WAIT_SECONDS (how long to wait for them, default 600), BACKUP_ID (default the UTC
#   time, e.g. 20261201T203000Z), NAMESPACE, API_URL, SA_DIR, SECRET_LABELS (lib/kube-api.sh;
#   no Secret is written here).
set -eu
: "${CLAIMS:?}" "${CLAIMS_DIR:?}" "${DB_CLAIM:?}" "${BACKUP_DIR:?}" "${FQDN:?}" "${TLS_MODE:?}" "${NAMESPACE:?}"
me=uyuni-backup
role=uyuni-backup

fail() {
  echo "$me: $*" >&2
  if [ -n "${work:-}" ] && [ -d "$work" ]; then printf '%s\n' "$*" >"$work/error"; fi
  exit 1
}

# shellcheck source-path=SCRIPTDIR source=lib/kube-api.sh
. "$(dirname "$0")/lib/kube-api.sh"
# shellcheck source-path=SCRIPTDIR source=lib/backup-manifest.sh
. "$(dirname "$0")/lib/backup-manifest.sh"
# shellcheck source-path=SCRIPTDIR source=lib/backup-record.sh
. "$(dirname "$0")/lib/backup-record.sh"

claims_dir=${CLAIMS_DIR%/}
backups=${BACKUP_DIR%/}
id=${BACKUP_ID:-$(date -u +%Y%m%dT%H%M%SZ)}
case $id in *[!0-9TZ]* | '') fail "BACKUP_ID must look like 20261201T203000Z, not '$id'" ;; esac
part=$backups/$id.part

# The estimate of CLAIM's archive: tar's 512-byte blocks of every file plus its header, and the end.
archive_estimate() {
  find "$1" -xdev ! -path "$1/lost+found" ! -path "$1/lost+found/*" -printf '%y %s\n' \
    | awk '{ n++; if ($1 == "f") b += int(($2 + 511) / 512) * 512 } END { printf "%.0f\n", b + n * 512 + 10240 }'
}

json_string() {
  printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g')"
}

entry() {
  printf '    {"name": "%s", "file": "%s", "bytes": %s, "disk": %s, "sha256": "%s"}' "$1" "$2" "$3" "$4" "$5"
}

release_value() {
  for f in "$claims_dir/$RELEASE_DIR/uyuni-release" "$claims_dir/$RELEASE_DIR/susemanager-release"; do
    if [ -f "$f" ]; then
      case $f in *uyuni-release) product=uyuni ;; *) product=suse-manager ;; esac
      line=$(head -n 1 "$f")
      detail=$(printf '%s\n' "$line" | sed -n 's/^[^(]*(\([0-9][^)]*\)).*$/\1/p')
      release=${detail:-$(printf '%s\n' "$line" | sed -n 's/^.*[Rr]elease[[:space:]]*\([0-9][^(]*\).*$/\1/p' | sed 's/[[:space:]]*$//')}
      return 0
    fi
  done
  product='' release=''
}

backup() {
  started=$(date +%s)
  { [ -d "$backups" ] && [ -w "$backups" ]; } || fail "the backup claim is not mounted writable at $backups"
  [ ! -e "$backups/$id" ] || fail "backup $id exists already"
  rm -rf "$part"
  set -f
  # shellcheck disable=SC2086 # CLAIMS is a list of claim names
  set -- $CLAIMS
  set +f
  total=$#
  for c in "$@"; do
    case $c in '' | *[!a-z0-9-]*) fail "CLAIMS: '$c' is not a claim name" ;; esac
    [ -d "$claims_dir/$c" ] || fail "claim $c is not mounted at $claims_dir/$c"
  done
  # What the backup is taken with (the pods' images by digest, the configuration, the identity):
  # recorded by uyuni-backup-record before the server stopped. No backup without it.
  record=$backups/$record_pending
  [ -f "$record" ] || fail "no record of what this backup is taken with ($record): Job uyuni-backup-record writes it before the server stops; nothing was copied"
  record_py check "$record" || fail "the record $record cannot be read; nothing was copied"
  db=$claims_dir/$DB_CLAIM
  [ -f "$db/PG_VERSION" ] || fail "the database claim $DB_CLAIM holds no PostgreSQL data (no PG_VERSION)"
  wait_stopped "$NAMESPACE" "${POD_SELECTOR:-}" "${STOP_WAIT_SECONDS:-600}"
  # PostgreSQL removes postmaster.pid when it shuts down: one left means it still runs or was
  # killed. A copy of a database that did not shut down cleanly is not taken.
  [ ! -e "$db/postmaster.pid" ] || fail "the database on $DB_CLAIM did not shut down cleanly (postmaster.pid is there): start and stop it (run dist/install, then this plan again); nothing was copied"
  need=0
  for c in "$@"; do
    need=$((need + $(archive_estimate "$claims_dir/$c")))
  done
  have=$(free_bytes "$backups")
  [ "$have" -gt "$need" ] || fail "the backup claim is full: it has $(human "$have") free, this backup needs about $(human "$need"): give backup.size more or keep fewer (backup.keep); nothing was written"
  echo "$me: backup $id: $total claims, about $(human "$need"), $(human "$have") free on the backup claim"

  umask 077
  mkdir -p "$part/claims" "$part/secrets"
  : >"$work/claims.list"
  n=0
  bytes_all=0
  for c in "$@"; do
    n=$((n + 1))
    t0=$(date +%s)
    src=$claims_dir/$c
    echo "$me: claim $n/$total $c: copying"
    tar --numeric-owner --xattrs --sparse --exclude=./lost+found -cpf "$part/claims/$c.tar" -C "$src" . \
      || fail "copying claim $c failed (tar exit $?)"
    bytes=$(wc -c <"$part/claims/$c.tar" | tr -d ' ')
    disk=$(($(du -sk "$src" | cut -f 1) * 1024))
    sum=$(sha256sum "$part/claims/$c.tar" | cut -d ' ' -f 1)
    secs=$(($(date +%s) - t0))
    rate=$(awk -v b="$bytes" -v s="$secs" 'BEGIN { if (s < 1) s = 1; printf "%.1f MiB/s", b / s / 1048576 }')
    bytes_all=$((bytes_all + bytes))
    echo "$me: claim $n/$total $c: $(human "$bytes") in ${secs}s ($rate), sha256 $sum"
    entry "$c" "claims/$c.tar" "$bytes" "$disk" "$sum" >>"$work/claims.list"
    printf '\n' >>"$work/claims.list"
  done
  pg_version=$(head -n 1 "$db/PG_VERSION")

  : >"$work/secrets.list"
  for s in ${SECRETS:-}; do
    case $s in *[!a-z0-9.-]*) fail "SECRETS: '$s' is not a Secret name" ;; esac
    status=$(request "$api/api/v1/namespaces/$NAMESPACE/secrets/$s") || fail "cannot reach the API at $api"
    case $status in
      200) ;;
      404) echo "$me: Secret $s does not exist: not saved"; continue ;;
      403) fail "reading Secret $s: HTTP 403: the service account may not get it (Role $role)" ;;
      *) fail "reading Secret $s: HTTP $status: $(head -c 300 "$work/body")" ;;
    esac
    # What re-creates it: type, data, labels and annotations (cert-manager's issuer annotations
    # keep it from re-issuing); never the server's bookkeeping (uid, resourceVersion, ...).
    python3 -c '
import json, sys
s = json.load(sys.stdin)
m = s.get("metadata", {})
keep = {"name": m.get("name"), "labels": m.get("labels") or {}, "annotations": m.get("annotations") or {} }
keep["annotations"].pop("kubectl.kubernetes.io/last-applied-configuration", None)
json.dump({"apiVersion": "v1", "kind": "Secret", "type": s.get("type", "Opaque"), "metadata": keep, "data": s.get("data") or {} }, sys.stdout, sort_keys=True)
' <"$work/body" >"$part/secrets/$s.json" || fail "Secret $s: the API's answer is not a Secret"
    chmod 0600 "$part/secrets/$s.json"
    bytes=$(wc -c <"$part/secrets/$s.json" | tr -d ' ')
    entry "$s" "secrets/$s.json" "$bytes" 0 "$(sha256sum "$part/secrets/$s.json" | cut -d ' ' -f 1)" >>"$work/secrets.list"
    printf '\n' >>"$work/secrets.list"
    echo "$me: saved Secret $s (keys only in the backup, mode 0600)"
  done

  mv "$record" "$part/record.json"
  rbytes=$(wc -c <"$part/record.json" | tr -d ' ')
  rsum=$(sha256sum "$part/record.json" | cut -d ' ' -f 1)

  release_value
  {
    printf '{\n'
    printf '  "fqdn": %s,\n' "$(json_string "$FQDN")"
    printf '  "serverImage": %s,\n' "$(json_string "${SERVER_IMAGE:-}")"
    printf '  "dbImage": %s,\n' "$(json_string "${DB_IMAGE:-}")"
    printf '  "imageTag": %s,\n' "$(json_string "${IMAGE_TAG:-}")"
    printf '  "tlsMode": %s,\n' "$(json_string "$TLS_MODE")"
    printf '  "product": %s,\n' "$(json_string "$product")"
    printf '  "release": %s,\n' "$(json_string "$release")"
    printf '  "pgVersion": %s\n' "$(json_string "$pg_version")"
    printf '}\n'
  } >"$part/identity.json"
  ibytes=$(wc -c <"$part/identity.json" | tr -d ' ')
  isum=$(sha256sum "$part/identity.json" | cut -d ' ' -f 1)

  # A list's entries joined by commas, one a line.
  join_entries() {
    sed '$!s/$/,/' "$1"
  }
  secs=$(($(date +%s) - started))
  {
    printf '{\n'
    printf '  "format": 1,\n'
    printf '  "id": "%s",\n' "$id"
    printf '  "created": "%s",\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    printf '  "fqdn": %s,\n' "$(json_string "$FQDN")"
    printf '  "product": %s,\n' "$(json_string "$product")"
    printf '  "release": %s,\n' "$(json_string "$release")"
    printf '  "pgVersion": "%s",\n' "$pg_version"
    printf '  "tlsMode": %s,\n' "$(json_string "$TLS_MODE")"
    printf '  "imageTag": %s,\n' "$(json_string "${IMAGE_TAG:-}")"
    printf '  "claims": [\n'
    join_entries "$work/claims.list"
    printf '  ],\n'
    printf '  "secrets": [\n'
    join_entries "$work/secrets.list"
    printf '  ],\n'
    printf '  "identity": [\n'
    entry identity identity.json "$ibytes" 0 "$isum"
    printf '\n  ],\n'
    printf '  "record": [\n'
    entry record record.json "$rbytes" 0 "$rsum"
    printf '\n  ],\n'
    printf '  "bytes": %s,\n' "$bytes_all"
    printf '  "seconds": %s,\n' "$secs"
    printf '  "complete": true\n'
    printf '}\n'
  } >"$part/manifest.json.tmp"
  mv "$part/manifest.json.tmp" "$part/manifest.json"
  sync "$part" 2>/dev/null || sync
  # Each checksum was read back from the backup claim; the full verification is
  # uyuni-backup-prune's, with the server running again (it shortens the downtime by a read).
  mv "$part" "$backups/$id"
  echo "$me: backup $id complete: $total claims, $(human "$bytes_all") in ${secs}s"
  echo "backup_ok=true"
  echo "backup_id=$id"
  echo "backup_bytes=$bytes_all"
  echo "backup_seconds=$secs"
}

# The copy runs in a subshell: whatever fails there, this Job still completes and says so.
set +e
(
  set -e
  backup
)
rc=$?
set -e
if [ "$rc" -ne 0 ]; then
  why=$(cat "$work/error" 2>/dev/null || echo "exit $rc")
  rm -rf "$part"
  echo "$me: backup $id FAILED: $why; the server is started again by the next step"
  echo "backup_ok=false"
  echo "backup_error=$why"
fi
exit 0
