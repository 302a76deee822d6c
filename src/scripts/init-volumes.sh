# init-volumes: each volume is mounted empty under /mnt<path> on first start; fill it with
# what the image ships at <path>, keeping owners and modes. Volumes that already hold data
# are left alone, so restarts and migrated data are safe.
# Input: VOLUME_PATHS, the mount paths separated by spaces.
set -eu
for path in $VOLUME_PATHS; do
  target="/mnt$path"
  if [ ! -d "$path" ]; then
    echo "init-volumes: $path: not in the image, left empty"
    continue
  fi
  if [ -n "$(ls -A "$target" 2>/dev/null)" ]; then
    echo "init-volumes: $path: has data, kept"
    continue
  fi
  echo "init-volumes: $path: empty, copying the image's content"
  cp -a "$path/." "$target/"
done
