# proxy-init-sshd: the second init container of Deployment uyuni-proxy, in the proxy-ssh image.
# It copies the image's sshd drop-ins into the emptyDir that container ssh mounts at
# /etc/ssh/sshd_config.d, and links the sshd tuning that ssh finds in its ssh-volume
# (ssh_tuning.conf) as 99-tuning.conf, read last. A restarted pod keeps its emptyDir: the link is
# replaced, never written through.
# Input: TARGET (the emptyDir, as mounted here), CONFIG_DIR (where ssh mounts the ssh-volume,
#   default /etc/uyuni), SSHD_DIR (the image's drop-in directory, default /etc/ssh/sshd_config.d).
set -eu
: "${TARGET:?}"
config_dir=${CONFIG_DIR:-/etc/uyuni}
sshd_dir=${SSHD_DIR:-/etc/ssh/sshd_config.d}

rm -f "$TARGET/99-tuning.conf"
# An image without drop-ins is fine: only the tuning then.
if [ -d "$sshd_dir" ]; then
  cp -r "$sshd_dir/." "$TARGET/"
fi
ln -sf "$config_dir/ssh_tuning.conf" "$TARGET/99-tuning.conf"
echo "proxy-init-sshd: drop-ins of $sshd_dir copied to $TARGET, tuning linked from $config_dir"
