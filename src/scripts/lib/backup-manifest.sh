# shellcheck shell=sh
# A backup's manifest.json, read and checked the same way by every backup and restore Job:
# uyuni-backup writes it last (one member a line, one archive a line, `"complete": true` as its
# last member), so a manifest that is cut short, or from an unfinished copy, is refused here.
# manifest_check DIR, manifest_value DIR KEY, manifest_entries DIR SECTION (claims|secrets|identity|record) and
# verify_backup DIR (every archive's size and sha256 against the manifest, before anything is
# written), latest_backup DIR, resolve_backup FROM DIR, check_targets (restore: every claim mounted,
# empty unless forced, room enough), human BYTES and, for scripts that include lib/kube-api.sh,
# wait_stopped. They read no environment: everything is an argument. Needs $me and fail. Inlined by synth (readScript in src/constructs/script-job.ts);
# sourced from beside the script when a test runs the file.
# shellcheck disable=SC2154 # $me, $work (and $api, for wait_stopped) are set by the including script

# A top-level string or number member of DIR/manifest.json.
manifest_value() {
  sed -n "s/^  \"$2\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}\$/\1/p" "$1/manifest.json" | head -n 1
}

# The entries of a list (claims or secrets), one a line: name file bytes disk sha256.
manifest_entries() {
  sed -n "/^  \"$2\": \[\$/,/^  \],\$/s/^    {\"name\": \"\([a-z0-9.-]*\)\", \"file\": \"\([A-Za-z0-9._\/-]*\)\", \"bytes\": \([0-9]*\), \"disk\": \([0-9]*\), \"sha256\": \"\([0-9a-f]\{64\}\)\"},\{0,1\}\$/\1 \2 \3 \4 \5/p" "$1/manifest.json"
}

# The manifest is there, whole (it ends with `"complete": true` and the closing brace), of format
# 1, for the backup of its directory's name. Fails saying which of these it is not.
manifest_check() {
  m=$1/manifest.json
  [ -f "$m" ] || fail "backup $(basename "$1"): no manifest.json: the copy did not finish (an incomplete backup is never restored)"
  tail_lines=$(tail -n 2 "$m" | tr '\n' '|')
  [ "$tail_lines" = '  "complete": true|}|' ] \
    || fail "backup $(basename "$1"): manifest.json is truncated or incomplete (it does not end with \"complete\": true): refused"
  [ "$(manifest_value "$1" format)" = 1 ] || fail "backup $(basename "$1"): manifest.json is not of format 1"
  [ "$(manifest_value "$1" id)" = "$(basename "${1%.part}")" ] || fail "backup $(basename "$1"): manifest.json names another backup ($(manifest_value "$1" id))"
  [ -n "$(manifest_entries "$1" claims)" ] || fail "backup $(basename "$1"): manifest.json lists no claim"
}

# verify_backup DIR: every file the manifest lists exists with its size and sha256; says N/M as it
# goes. Fails at the first difference, naming the file.
verify_backup() {
  manifest_check "$1"
  { manifest_entries "$1" claims; manifest_entries "$1" secrets; manifest_entries "$1" identity; manifest_entries "$1" record; } >"$work/verify.list"
  vtotal=$(wc -l <"$work/verify.list" | tr -d ' ')
  vn=0
  while read -r _name file bytes _disk sum; do
    vn=$((vn + 1))
    f=$1/$file
    [ -f "$f" ] || fail "backup $(basename "$1"): $file is missing: refused"
    size=$(wc -c <"$f" | tr -d ' ')
    [ "$size" = "$bytes" ] || fail "backup $(basename "$1"): $file has $size bytes, the manifest says $bytes: the backup was changed or damaged: refused"
    got=$(sha256sum "$f" | cut -d ' ' -f 1)
    [ "$got" = "$sum" ] || fail "backup $(basename "$1"): $file does not match its sha256 in the manifest: the backup was changed or damaged: refused"
    echo "$me: verified $vn/$vtotal $file ($bytes bytes)"
  done <"$work/verify.list"
}

# Bytes as people read them.
human() {
  awk -v b="$1" 'BEGIN { split("B KiB MiB GiB TiB", u, " "); i = 1; while (b >= 1024 && i < 5) { b /= 1024; i++ } printf (i == 1 ? "%d %s" : "%.1f %s"), b, u[i] }'
}

# The newest complete backup in DIR (a directory named like 20261201T203000Z; <id>.part is a copy
# that did not finish), or nothing.
latest_backup() {
  find "$1" -mindepth 1 -maxdepth 1 -type d -name '[0-9]*T[0-9]*Z' -printf '%f\n' | grep -E '^[0-9]{8}T[0-9]{6}Z$' | sort | tail -n 1
}

# The backup FROM names in BACKUP_DIR (latest, or an id), as a directory; fails when there is none.
resolve_backup() {
  case $1 in
    latest)
      id=$(latest_backup "$2")
      [ -n "$id" ] || fail "there is no complete backup in $2 (restore.from: latest)"
      ;;
    *)
      case $1 in *[!0-9TZ]*) fail "restore.from must be latest or a backup id such as 20261201T203000Z, not '$1'" ;; esac
      id=$1
      [ -d "$2/$id" ] || fail "there is no backup $id in $2 (there are: $(find "$2" -mindepth 1 -maxdepth 1 -type d -printf '%f ' 2>/dev/null))"
      ;;
  esac
  printf '%s\n' "$2/$id"
}

free_bytes() {
  df -Pk "$1" | awk 'NR == 2 { printf "%.0f\n", $4 * 1024 }'
}

# What a claim holds besides lost+found, as a count of entries at its top.
entries_of() {
  find "$1" -mindepth 1 -maxdepth 1 ! -name lost+found | wc -l | tr -d ' '
}

# check_targets BACKUP CLAIMS_DIR FORCE: every claim of the backup is mounted at
# CLAIMS_DIR/<name>, is empty (unless FORCE is true) and has room for what the archive unpacks to. Writes $work/with-data (the claims
# that hold data); fails at the first claim that is missing or too small. Changes nothing.
check_targets() {
  : >"$work/with-data"
  manifest_entries "$1" claims >"$work/targets.list"
  while read -r name _file _bytes disk _sum; do
    t=${2%/}/$name
    [ -d "$t" ] || fail "the backup holds claim $name, which is not mounted at $t (no such claim in this configuration): refused"
    used=0
    if [ "$(entries_of "$t")" != 0 ]; then
      echo "$name" >>"$work/with-data"
      used=$(($(du -sk "$t" | cut -f 1) * 1024))
    fi
    room=$(free_bytes "$t")
    if [ "$3" = true ]; then room=$((room + used)); fi
    [ "$room" -ge "$disk" ] \
      || fail "claim $name is too small: the backup needs $(human "$disk") there, it has $(human "$room") free: give volumes.overrides.$name.size more; nothing was written"
  done <"$work/targets.list"
}

# wait_stopped NAMESPACE SELECTOR SECONDS: waits (up to SECONDS) until no pod of the label
# SELECTOR is left (none: no wait): a scaled-down Deployment's pod can still be terminating, and
# writing. Needs lib/kube-api.sh.
wait_stopped() {
  [ -n "$2" ] || return 0
  waited=0
  limit=$3
  while :; do
    status=$(request -G --data-urlencode "labelSelector=$2" "$api/api/v1/namespaces/$1/pods") || fail "cannot reach the API at $api"
    [ "$status" = 200 ] || fail "listing the server's pods: HTTP $status: $(head -c 300 "$work/body")"
    left=$(python3 -c 'import json, sys; print(len(json.load(sys.stdin).get("items") or []))' <"$work/body")
    [ "$left" = 0 ] && return 0
    [ "$waited" -lt "$limit" ] || fail "$left pods of the server are still there after ${limit}s ($2): nothing was written"
    echo "$me: waiting for $left pods of the server to be gone"
    sleep 5
    waited=$((waited + 5))
  done
}
