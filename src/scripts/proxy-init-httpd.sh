# proxy-init-httpd: the first init container of Deployment uyuni-proxy, in the proxy-httpd image.
# It copies the image's Apache configuration into the emptyDir that container httpd mounts at
# /etc/apache2, and links into it what httpd finds in its httpd-volume: the proxy's certificate
# (server.crt) and key (server.key), and the Apache tuning (apache_tuning.conf), linked as
# conf.d/zz_apache_tuning.conf: read after the image's spacewalk-proxy configuration, so its MPM
# settings win (proxy-helm change file mbussolotto.fix-httpd-tuning-override @ b38b7634,
# bsc#1277719). A restarted pod keeps its emptyDir: the links are replaced, never written through.
# Input: TARGET (the emptyDir, as mounted here), CONFIG_DIR (where httpd mounts the httpd-volume,
#   default /etc/uyuni), APACHE_DIR (the image's Apache configuration, default /etc/apache2).
set -eu
: "${TARGET:?}"
config_dir=${CONFIG_DIR:-/etc/uyuni}
apache_dir=${APACHE_DIR:-/etc/apache2}

[ -d "$apache_dir" ] || {
  echo "proxy-init-httpd: $apache_dir does not exist: is this the proxy-httpd image?" >&2
  exit 1
}
rm -f "$TARGET/ssl.crt/server.crt" "$TARGET/ssl.key/server.key" "$TARGET/conf.d/apache_tuning.conf" "$TARGET/conf.d/zz_apache_tuning.conf"
cp -r "$apache_dir/." "$TARGET/"
mkdir -p "$TARGET/ssl.crt" "$TARGET/ssl.key" "$TARGET/conf.d"
ln -sf "$config_dir/server.crt" "$TARGET/ssl.crt/server.crt"
ln -sf "$config_dir/server.key" "$TARGET/ssl.key/server.key"
ln -sf "$config_dir/apache_tuning.conf" "$TARGET/conf.d/zz_apache_tuning.conf"
echo "proxy-init-httpd: $apache_dir copied to $TARGET, certificate, key and tuning linked from $config_dir"
