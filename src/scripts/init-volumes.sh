# init-volumes: the server pod's first init container, in the server image. Each claim is mounted,
# empty on the first start and full afterwards, at <MNT><path>: it gets the owner and mode of
# <path> in the image (as the official chart does), and the image's content when it is empty.
# Claims that hold data keep it, so restarts and migrated data are safe; a claim that holds only
# lost+found (a new ext4 volume) counts as empty. Then it records which
# release the data last ran: the image's release file goes to RELEASE_DIR (on the etc-rhn claim),
# where the next upgrade's inspection reads it to refuse a downgrade or a product switch.
# Input: VOLUME_PATHS (the mount paths, space-separated), RELEASE_DIR (e.g. /etc/rhn/uyuni-cdk),
#   MNT (where the claims are mounted, default /mnt), IMAGE_ETC (where the image's uyuni-release
#   or susemanager-release is, default /etc).
set -eu
: "${VOLUME_PATHS:?}" "${RELEASE_DIR:?}"
mnt=${MNT:-/mnt}
image_etc=${IMAGE_ETC:-/etc}

fail() {
  echo "init-volumes: $*" >&2
  exit 1
}

for path in $VOLUME_PATHS; do
  path=${path%/}
  target=$mnt$path
  if [ ! -d "$path" ]; then
    echo "init-volumes: $path: not in the image, left empty"
    continue
  fi
  [ -d "$target" ] || fail "$path: its claim is not mounted at $target"
  chown --reference="$path" "$target"
  chmod --reference="$path" "$target"
  # A fresh ext4 claim holds lost+found: that is no data (sumaform formats xfs for this reason).
  if [ -n "$(find "$target" -mindepth 1 -maxdepth 1 ! -name lost+found | head -n 1)" ]; then
    echo "init-volumes: $path: has data, kept"
    continue
  fi
  echo "init-volumes: $path: empty, copying the image's content"
  cp -a "$path/." "$target/"
done

# After the copy: RELEASE_DIR lies on a claim, which must not look full before it is filled.
if [ -f "$image_etc/uyuni-release" ]; then
  release=uyuni-release other=susemanager-release
elif [ -f "$image_etc/susemanager-release" ]; then
  release=susemanager-release other=uyuni-release
else
  fail "the image has no $image_etc/uyuni-release nor $image_etc/susemanager-release"
fi
record=$mnt${RELEASE_DIR%/}
mkdir -p "$record"
rm -f "$record/$other"
cp "$image_etc/$release" "$record/$release.new"
mv "$record/$release.new" "$record/$release"
echo "init-volumes: the data now runs: $(head -n 1 "$record/$release")"
