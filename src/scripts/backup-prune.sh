# uyuni-backup-prune: after a backup, with the server running again: verifies the newest backup on
# the backup claim (every file's size and sha256 against its manifest) and, only when it
# verifies, removes the oldest complete backups beyond KEEP and every unfinished copy (<id>.part).
# Prints the backups that are left as facts for `uyuni-cdk status`: backups=<count> and
# backup.<n>=<id> <created> <bytes> <verified|unverified> (n=1 the newest); a backup verified
# once is marked (<id>.verified), so each is read in full once.
# Input: BACKUP_DIR (the backup claim), KEEP (how many complete backups to keep, at least 1).
set -eu
: "${BACKUP_DIR:?}" "${KEEP:?}"
me=uyuni-backup-prune
backups=${BACKUP_DIR%/}

fail() {
  echo "$me: $*" >&2
  exit 1
}
case $KEEP in '' | *[!0-9]* | 0) fail "KEEP must be a whole number of at least 1, not '$KEEP'" ;; esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# shellcheck source-path=SCRIPTDIR source=lib/backup-manifest.sh
. "$(dirname "$0")/lib/backup-manifest.sh"

newest=$(latest_backup "$backups")
[ -n "$newest" ] || fail "there is no complete backup in $backups: nothing is removed"
verify_backup "$backups/$newest"
date -u +%Y-%m-%dT%H:%M:%SZ >"$backups/$newest.verified"
echo "$me: backup $newest verified"

# Unfinished copies never count and never stay.
find "$backups" -mindepth 1 -maxdepth 1 -type d -name '*.part' -print | while read -r p; do
  rm -rf "$p"
  echo "$me: removed the unfinished copy $(basename "$p")"
done
find "$backups" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | grep -E '^[0-9]{8}T[0-9]{6}Z$' | sort -r >"$work/all"
n=0
while read -r id; do
  n=$((n + 1))
  if [ "$n" -gt "$KEEP" ]; then
    rm -rf "${backups:?}/$id" "$backups/$id.verified"
    echo "$me: removed backup $id (backup.keep is $KEEP)"
  fi
done <"$work/all"

left=$(head -n "$KEEP" "$work/all" | wc -l | tr -d ' ')
echo "backups=$left"
n=0
head -n "$KEEP" "$work/all" | while read -r id; do
  n=$((n + 1))
  d=$backups/$id
  if [ -f "$d/manifest.json" ]; then
    created=$(manifest_value "$d" created)
    bytes=$(manifest_value "$d" bytes)
  else
    created=unknown bytes=0
  fi
  verified=unverified
  [ -f "$d.verified" ] && verified=verified
  echo "backup.$n=$id ${created:-unknown} ${bytes:-0} $verified"
done
