# uyuni-restore: writes a backup of uyuni-backup back, with the server stopped: every claim from
# its archive (mounted at CLAIMS_DIR/<claim>), the database claim with it (the cold copy of a
# PostgreSQL that was shut down: it starts as it stopped), and the Secrets it saved (created when
# missing, replaced with FORCE=true when they differ, kept when equal). Before it writes anything
# it checks everything: the manifest is complete, every archive matches its size and sha256,
# every claim is mounted, empty (unless FORCE=true: then its content is replaced) and large
# enough, no Secret differs (unless FORCE=true), and no server or database pod is left. Any
# refusal leaves every claim and Secret as it was. Progress per claim: N/M, bytes and rate.
# Input: BACKUP_DIR (the backup claim, read-only), FROM (latest or a backup id), CLAIMS_DIR,
#   FORCE (true|false), POD_SELECTOR (label selector of the pods that must be gone),
#   STOP_WAIT_SECONDS (how long to wait for them, default 600), NAMESPACE, SECRET_LABELS,
#   API_URL, SA_DIR (lib/kube-api.sh).
set -eu
: "${BACKUP_DIR:?}" "${FROM:?}" "${CLAIMS_DIR:?}" "${FORCE:?}" "${NAMESPACE:?}"
me=uyuni-restore
role=uyuni-restore

fail() {
  echo "$me: $*" >&2
  exit 1
}
case $FORCE in true | false) ;; *) fail "FORCE must be true or false, not '$FORCE'" ;; esac

# shellcheck source-path=SCRIPTDIR source=lib/kube-api.sh
. "$(dirname "$0")/lib/kube-api.sh"
# shellcheck source-path=SCRIPTDIR source=lib/backup-manifest.sh
. "$(dirname "$0")/lib/backup-manifest.sh"

dir=$(resolve_backup "$FROM" "${BACKUP_DIR%/}")
id=$(basename "$dir")
echo "$me: restoring backup $id"

# 1. Everything is checked first; nothing is written before all of it passed.
verify_backup "$dir"
check_targets "$dir" "$CLAIMS_DIR" "$FORCE"
if [ -s "$work/with-data" ] && [ "$FORCE" != true ]; then
  fail "these claims hold data: $(paste -s -d ' ' "$work/with-data"): a restore would replace it; set restore.force: true to allow that; nothing was written"
fi

# compare_secret FILE: prints create, same or replace <resourceVersion> for the saved Secret.
compare_secret() {
  name=$(basename "$1" .json)
  status=$(request "$api/api/v1/namespaces/$NAMESPACE/secrets/$name") || fail "cannot reach the API at $api"
  case $status in
    404) echo create ;;
    200) python3 -c '
import json, sys
saved = json.load(open(sys.argv[1]))
live = json.load(sys.stdin)
same = (live.get("data") or {}) == (saved.get("data") or {}) and live.get("type", "Opaque") == saved.get("type", "Opaque")
print("same" if same else "replace " + live["metadata"]["resourceVersion"])
' "$1" <"$work/body" ;;
    403) fail "reading Secret $name: HTTP 403: the service account may not get it (Role $role)" ;;
    *) fail "reading Secret $name: HTTP $status: $(head -c 300 "$work/body")" ;;
  esac
}
manifest_entries "$dir" secrets >"$work/secrets.list"
: >"$work/secret-plan"
while read -r _name file _bytes _disk _sum; do
  what=$(compare_secret "$dir/$file")
  case $what in
    replace*)
      [ "$FORCE" = true ] || fail "Secret $(basename "$file" .json) exists with other values than the backup's: the restored data needs the backup's; set restore.force: true to replace it; nothing was written"
      ;;
  esac
  echo "$file $what" >>"$work/secret-plan"
done <"$work/secrets.list"
wait_stopped "$NAMESPACE" "${POD_SELECTOR:-}" "${STOP_WAIT_SECONDS:-600}"

# 2. The claims.
manifest_entries "$dir" claims >"$work/claims.list"
total=$(wc -l <"$work/claims.list" | tr -d ' ')
n=0
while read -r name file bytes _disk _sum; do
  n=$((n + 1))
  t=${CLAIMS_DIR%/}/$name
  t0=$(date +%s)
  # Replaced, not merged: a file the backup does not have must not stay (FORCE only; else empty).
  find "$t" -mindepth 1 -maxdepth 1 ! -name lost+found -exec rm -rf {} +
  tar --numeric-owner --xattrs --sparse -xpf "$dir/$file" -C "$t" || fail "unpacking $file into claim $name failed (tar exit $?): the claims are partly restored; run the restore again"
  secs=$(($(date +%s) - t0))
  rate=$(awk -v b="$bytes" -v s="$secs" 'BEGIN { if (s < 1) s = 1; printf "%.1f MiB/s", b / s / 1048576 }')
  echo "$me: claim $n/$total $name: $(human "$bytes") in ${secs}s ($rate)"
done <"$work/claims.list"

# 3. The Secrets, as saved (their labels and annotations too), in this namespace.
while read -r file what rv; do
  name=$(basename "$file" .json)
  case $what in
    same) echo "$me: Secret $name is as in the backup: kept"; continue ;;
  esac
  python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
s["metadata"]["namespace"] = sys.argv[2]
labels = json.loads(sys.argv[3] or "{}")
s["metadata"].setdefault("labels", {}).update(labels)
if sys.argv[4]:
    s["metadata"]["resourceVersion"] = sys.argv[4]
json.dump(s, sys.stdout)
' "$dir/$file" "$NAMESPACE" "$labels" "${rv:-}" >"$work/secret.json"
  if [ "$what" = create ]; then
    status=$(request -X POST --data-binary "@$work/secret.json" "$api/api/v1/namespaces/$NAMESPACE/secrets") || fail "cannot reach the API at $api"
    expect=201
  else
    status=$(request -X PUT --data-binary "@$work/secret.json" "$api/api/v1/namespaces/$NAMESPACE/secrets/$name") || fail "cannot reach the API at $api"
    expect=200
  fi
  rm -f "$work/secret.json"
  [ "$status" = "$expect" ] || fail "writing Secret $name: HTTP $status: $(head -c 300 "$work/body")"
  echo "$me: Secret $name ${what%% *}d from the backup"
done <"$work/secret-plan"
echo "restored_id=$id"
echo "$me: backup $id restored: $total claims"
