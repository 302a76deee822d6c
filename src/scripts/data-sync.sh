# uyuni-data-sync: copies an old (non-container) Uyuni or SUSE Manager server's data over ssh into
# the new claims, fetches what later steps need into the migration data (facts, database
# credentials, CA files, custom trust anchors, the distributions' new places) and adapts the
# copied configuration to the container. The last upstream logic (uyuni-tools @ c09ccfba
# mgradm/shared/templates/migrateScriptTemplate.go), laid out for the claims: each claim is
# mounted at <TARGET_ROOT><path>, the old /var/lib/pgsql goes into the claim var-pgsql.
# With PREPARE=true (Job uyuni-data-presync) it copies while the old server keeps running: no
# service is stopped, the PostgreSQL data is left out (a running database cannot be copied
# consistently), neither the setup marker nor the credentials are written. The final run
# (PREPARE=false) stops the old server; rsync then sends only what changed since.
# Every value arrives as an environment variable; none is pasted into this text.
# Input: SOURCE_FQDN, SOURCE_USER, SOURCE_PORT (the old server and how to log in: the user runs
#   rsync and the commands through sudo), VOLUME_PATHS (the claims' mount paths, space-separated),
#   TARGET_ROOT (where the claims are mounted: <TARGET_ROOT><path>), OLD_PG_VERSION,
#   NEW_PG_VERSION, MIGRATION_DIR (the migration-data claim), PREPARE (true|false, default
#   false), SSH_DIR (default /root/.ssh: key, known_hosts and, when there, config), IMAGE_ROOT
#   (where this image's own files are, default empty: <IMAGE_ROOT><path>; an empty claim gets
#   them before the copy, so what the copy leaves out keeps the new image's version),
#   ANCHORS_DIR (optional: where the ca-certs claim is mounted; the custom CA certificates are
#   put there too, where the new server's update-ca-certificates finds them), PG_OWNER (<uid>:<gid>
#   the copied PostgreSQL data is given to: the postgres of the server-postgresql and
#   server-database-migration images, default 999:999), PROGRESS_SECONDS (how often rsync's
#   overall progress is printed while a copy runs, default 2).
set -eu
: "${SOURCE_FQDN:?}" "${SOURCE_USER:?}" "${SOURCE_PORT:?}" "${VOLUME_PATHS:?}"
: "${TARGET_ROOT:?}" "${OLD_PG_VERSION:?}" "${NEW_PG_VERSION:?}" "${MIGRATION_DIR:?}"
prepare=${PREPARE:-false}
pg_owner=${PG_OWNER:-999:999}
ssh_dir=${SSH_DIR:-/root/.ssh}
image_root=${IMAGE_ROOT:-}
progress_seconds=${PROGRESS_SECONDS:-2}
job=uyuni-data-sync
claim=

fail() {
  echo "$job: $*" >&2
  exit 1
}
say() {
  echo "$job: $*"
}
warn() {
  echo "$job: warning: $*" >&2
}

case $prepare in
  true) job=uyuni-data-presync ;;
  false) ;;
  *) fail "PREPARE must be true or false, not '$prepare'" ;;
esac
# Checked again here (the configuration checks them first): no value may become an ssh option.
case $SOURCE_FQDN in '' | -* | *[!A-Za-z0-9.-]*) fail "SOURCE_FQDN is not a host name" ;; esac
case $SOURCE_USER in '' | -* | *[!a-z0-9_.-]*) fail "SOURCE_USER is not a user name" ;; esac
case $SOURCE_PORT in '' | *[!0-9]*) fail "SOURCE_PORT is not a port number" ;; esac
case $OLD_PG_VERSION$NEW_PG_VERSION in '' | *[!0-9]*) fail "the PostgreSQL versions must be numbers" ;; esac
case $progress_seconds in '' | *[!0-9]*) fail "PROGRESS_SECONDS must be a number of seconds, not '$progress_seconds'" ;; esac
case $ssh_dir in '' | *[!A-Za-z0-9._/-]*) fail "SSH_DIR is not a plain directory path" ;; esac
case $pg_owner in '' | *[!0-9:]* | :* | *: | *:*:*) fail "PG_OWNER must be <uid>:<gid>, not '$pg_owner'" ;; *:*) ;; *) fail "PG_OWNER must be <uid>:<gid>, not '$pg_owner'" ;; esac

work=$(mktemp -d)
# One connection for the whole run: every further ssh and rsync goes through it (no new
# handshake and login each time); closed on exit.
SSH="ssh -i $ssh_dir/key -p $SOURCE_PORT -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile=$ssh_dir/known_hosts"
SSH="$SSH -o ControlMaster=auto -o ControlPath=$work/ssh-%C -o ControlPersist=300"
if [ -f "$ssh_dir/config" ]; then SSH="$SSH -F $ssh_dir/config"; fi
cleanup() {
  $SSH -O exit -l "$SOURCE_USER" -- "$SOURCE_FQDN" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

# ssh joins the words of a command and the source's login shell splits them again: each word
# goes single-quoted, so a path or an SQL text arrives as one word, whatever it holds.
quote() {
  for word; do
    printf "'%s' " "$(printf '%s\n' "$word" | sed "s/'/'\\\\''/g")"
  done
}
remote() {
  $SSH -n -l "$SOURCE_USER" -- "$SOURCE_FQDN" "$(quote "$@")"
}

# pull <what> <rsync arguments>: rsync from the source through sudo, every change itemized. A
# file that vanished while it was read (status 24: a log rotated on a running server) is only a
# warning. rsync's output goes through progress(): each itemized file becomes an "@file " line
# (the runtime keeps those in the step's log file only), rsync's overall progress
# (--info=progress2) an "@progress " line at most every PROGRESS_SECONDS and at the end:
#   @progress claim=3/16 bytes=1234567 percent=45 rate=12.34MB/s eta=0:01:23 path=/var/spacewalk
# (claim=N/M while a claim of VOLUME_PATHS is copied, from $claim; eta while a file is on its
# way; done=1 last, with percent=100: rsync's own last figure ends below 100 on a delta run).
pull() {
  pull_what=$1
  shift
  {
    status=0
    rsync -avz --itemize-changes --info=progress2 --outbuf=N -e "$SSH" --rsync-path='sudo rsync' "$@" </dev/null || status=$?
    echo "$status" >"$work/rsync-status"
  } | progress "$pull_what"
  status=$(cat "$work/rsync-status")
  case $status in
    0) ;;
    24) warn "some files vanished on $SOURCE_FQDN while they were copied" ;;
    *) fail "rsync failed (status $status)" ;;
  esac
}
# progress <what>: rsync's stdout (records ended by CR or LF; unbuffered, --outbuf=N) as @file
# and @progress lines. gawk where there is one: it takes each record as it arrives (mawk fills
# its buffer first, so its progress lines come late). srand() returns the previous seed: called
# twice, the time of day in seconds (POSIX awk).
awk=$(command -v gawk || echo awk)
progress() {
  # shellcheck disable=SC2016 # awk's fields, not the shell's
  LC_ALL=C "$awk" -v what="$1" -v claim="$claim" -v every="$progress_seconds" '
    function now() { srand(); return srand() }
    function report(done) {
      if (bytes == "") return
      printf "@progress %sbytes=%s percent=%s rate=%s%s%s path=%s\n", claim != "" ? "claim=" claim " " : "", \
        bytes, done ? 100 : percent, rate, (eta != "" && !done) ? " eta=" eta : "", done ? " done=1" : "", what
      fflush()
      last = now()
    }
    BEGIN { RS = "\r"; last = 0 }
    {
      n = split($0, lines, "\n")
      for (i = 1; i <= n; i++) {
        line = lines[i]
        if (line ~ /^ *[0-9][0-9,]* +[0-9]+% +[^ ]+\/s +[0-9]+:[0-9][0-9]:[0-9][0-9]/) {
          split(line, f, " ")
          bytes = f[1]; gsub(/,/, "", bytes); percent = f[2]; sub(/%/, "", percent); rate = f[3]
          # The time is the rest while a file is on its way, the elapsed time once it is done (xfr#).
          eta = line ~ /xfr#/ ? "" : f[4]
          if (now() - last >= every) report(0)
        } else if (line != "") {
          print "@file " line
          fflush()
        }
      }
    }
    END { report(1) }'
}
from() {
  printf '%s@%s:%s' "$SOURCE_USER" "$SOURCE_FQDN" "$1"
}

# fetch <source file> <file> <mode>: one file of the source, never printed, written with <mode>.
fetch() {
  (umask 077 && remote sudo cat "$1" >"$2.new") || fail "cannot read $1 on $SOURCE_FQDN"
  chmod "$3" "$2.new"
  mv "$2.new" "$2"
}

# A path that lies on a claim (else writing it would only change this container).
on_claim() {
  for volume in $VOLUME_PATHS; do
    volume=${volume%/}
    case $1 in "$volume" | "$volume"/*) return 0 ;; esac
  done
  return 1
}

# edit <file> <sed arguments>: rewrites the file only when sed changes it, in place (owner and
# mode kept); an unchanged file keeps its time, so the next run's rsync does not send it again.
edit() {
  edit_file=$1
  shift
  sed "$@" "$edit_file" >"$work/edit"
  if [ "$(cksum <"$edit_file")" != "$(cksum <"$work/edit")" ]; then cat "$work/edit" >"$edit_file"; fi
}


# The whole claim at $1 is excluded (/etc/systemd/** for the systemd claims).
excluded() {
  while IFS= read -r ex_pattern; do
    ex_base=${ex_pattern%/\*\*}
    case $1 in "$ex_base" | "$ex_base"/*) return 0 ;; esac
  done <"$work/exclude"
  return 1
}

# The rsync filter rules of the claim at $1, relative to it: the claims nested in it, the
# excludes below it, the distributions' targets protected from --delete.
volume_rules() {
  echo '- /lost+found'
  for rule_other in $VOLUME_PATHS; do
    rule_other=${rule_other%/}
    case $rule_other in "$1"/?*) echo "- /${rule_other#"$1"/}" ;; esac
  done
  case $1 in
    /var/lib/pgsql) printf '%s\n' '- /data/postmaster.pid' '- /data/postmaster.opts' '- /data-pg*' ;;
    /var/log) echo '- /journal' ;;
  esac
  while IFS= read -r rule_pattern; do
    case $rule_pattern in "$1"/?*) echo "- /${rule_pattern#"$1"/}" ;; esac
  done <"$work/exclude"
  case $dist_root in
    "$1"/*)
      echo "P /${dist_root#"$1"/}"
      while IFS=' ' read -r rule_target _; do
        echo "P /${dist_root#"$1"/}/$rule_target"
      done <"$work/distributions"
      ;;
  esac
}

# A claim is empty when it holds nothing but lost+found.
empty() {
  for entry in "$1"/* "$1"/.[!.]* "$1"/..?*; do
    if [ -e "$entry" ] || [ -L "$entry" ]; then
      [ "${entry##*/}" = lost+found ] || return 1
    fi
  done
  return 0
}

# Copied apart, without the package filter (their files are the admin's even when a package owns
# them). The cobbler snippets (/var/lib/cobbler/snippets) come with the claim var-cobbler.
copy_dir() {
  if ! on_claim "$2"; then
    warn "$2 is on no claim: $1 is not copied"
  elif remote sudo test -d "$1"; then
    say "copying $1 to $2"
    mkdir -p "$TARGET_ROOT$2"
    pull "$2" --delete "$(from "$1/")" "$TARGET_ROOT$2/"
  fi
}

fingerprint() {
  openssl x509 -in "$1" -noout -fingerprint -sha256 2>/dev/null || true
}

# rhn.conf value by key, from the copied configuration.
conf_value() {
  cv_key=$(printf '%s\n' "$1" | sed 's/\./\\./g')
  sed -n "s/^[[:space:]]*${cv_key}[[:space:]]*=[[:space:]]*//p" "$conf" | tail -n 1 | sed 's/[[:space:]]*$//'
}

set_conf() {
  sc_key=$(printf '%s\n' "$1" | sed 's/\./\\./g')
  if grep -q "^[[:space:]]*${sc_key}[[:space:]]*=" "$conf"; then
    edit "$conf" -e "s|^\([[:space:]]*${sc_key}[[:space:]]*=\).*\$|\1 $2|"
  else
    [ -z "$(tail -c 1 "$conf")" ] || echo >>"$conf"
    printf '%s = %s\n' "$1" "$2" >>"$conf"
  fi
}

# Log in, and check that the source is a non-container Uyuni or SUSE Manager server of the configured PostgreSQL.
check_source() {
  say "connecting to $SOURCE_USER@$SOURCE_FQDN:$SOURCE_PORT"
  remote true || fail "cannot log in over ssh: check the Secret uyuni-migration-key and the ConfigMap uyuni-migration-ssh (known_hosts must hold $SOURCE_FQDN)"

  source_pg=$(remote sudo cat /var/lib/pgsql/data/PG_VERSION) || fail "cannot read /var/lib/pgsql/data/PG_VERSION on $SOURCE_FQDN"
  if [ "$source_pg" != "$OLD_PG_VERSION" ]; then
    fail "$SOURCE_FQDN runs PostgreSQL $source_pg, the configuration says migration.postgresql.from: $OLD_PG_VERSION"
  fi
  remote sh -c 'test -f /etc/susemanager-release || test -f /etc/uyuni-release' \
    || fail "$SOURCE_FQDN has neither /etc/susemanager-release nor /etc/uyuni-release: not a non-container Uyuni or SUSE Manager server"
  db_name=$(remote sudo sed -n 's/^[[:space:]]*db_name[[:space:]]*=[[:space:]]*//p' /etc/rhn/rhn.conf | tail -n 1 | sed 's/[[:space:]]*$//')
  [ -n "$db_name" ] || fail "$SOURCE_FQDN has no db_name in /etc/rhn/rhn.conf"
}

# Quiet the source (the final run) and list its auto-installable distributions, with nothing
# looking set up meanwhile.
quiet_source() {
  # Nothing may look set up while the claims are being filled.
  marker=$TARGET_ROOT/var/spacewalk/.MANAGER_SETUP_COMPLETE
  rm -f "$marker"

  # A consistent copy needs a quiet source; the database runs for the distributions' export only.
  if [ "$prepare" = false ]; then
    say "stopping spacewalk-service on $SOURCE_FQDN"
    remote sudo spacewalk-service stop
  fi
  remote sudo systemctl start postgresql
  say "reading the auto-installable distributions from the database $db_name"
  # shellcheck disable=SC2016 # expanded by the source's shell
  remote sh -c 'cd / && exec sudo -u postgres psql -X -q -d "$1" -c "$2"' sh "$db_name" \
    "COPY (SELECT MIN(CONCAT(org_id,'-',label)) AS target, base_path FROM rhnKickstartableTree GROUP BY base_path) TO STDOUT WITH CSV" \
    >"$work/distros" || fail "cannot read rhnKickstartableTree on $SOURCE_FQDN"
  if [ "$prepare" = false ]; then
    say "stopping postgresql on $SOURCE_FQDN"
    remote sudo systemctl stop postgresql
  fi

  # The distributions, <target>,<base path> (CSV: a base path with a comma comes quoted). Each one
  # on the source goes to /srv/www/distributions/<target> and is left out of the claims' copy;
  # $work/distributions holds "<target> <base path>" lines.
  dist_root=/srv/www/distributions
  : >"$work/distributions"
  : >"$work/distributions.csv"
  while IFS= read -r line; do
    target=${line%%,*} base=${line#*,}
    case $base in \"*\") base=$(printf '%s\n' "$base" | sed 's/^"//; s/"$//; s/""/"/g') ;; esac
    case $target in '' | .* | *[!A-Za-z0-9._-]*) warn "distribution '$target': not a plain name, skipped"; continue ;; esac
    case $base in /?*) base=${base%/} ;; *) warn "distribution $target: '$base' is not an absolute path, skipped"; continue ;; esac
    if remote sudo test -d "$base"; then
      printf '%s %s\n' "$target" "$base" >>"$work/distributions"
      printf '%s,%s\n' "$line" "$dist_root/$target" >>"$work/distributions.csv"
    else
      say "distribution $target: $base is not on $SOURCE_FQDN, skipped"
    fi
  done <"$work/distros"
}

# What is never copied into a claim (absolute rsync patterns; upstream's list): state of the old
# host that means nothing in a container, configuration the new image brings, the distributions
# (copied apart), the CA that the new pod mounts or writes itself.
write_excludes() {
  {
    echo '/var/cache/zypp/**'
    echo '/var/cache/rhn/reposync/**' # dangling symlinks, no value (bsc#1231769)
    echo /root/.mgr-sync              # re-generated (bsc#1228685)
    echo /etc/sysconfig/tomcat        # the tomcat defaults: settings belong in /etc/tomcat/conf.d
    echo /etc/tomcat/tomcat.conf
    echo /etc/krb5.conf.d             # copied into /etc/rhn/krb5.conf.d below
    echo /etc/rhn/krb5.conf.d         # the image creates it: kept from --delete
    echo /etc/sysconfig/rhn/reportdb-schema-upgrade
    echo /etc/sysconfig/rhn/schema-upgrade
    echo /var/log/lastlog
    echo '/etc/systemd/**'            # the host's units: the container's come from the image
    echo '/etc/salt/master.d/py2*-compat-salt.conf'
    echo /etc/apache2/vhosts.d/cobbler.conf # uyuni issue #10055
    echo /srv/www/htdocs/pub/RHN-ORG-TRUSTED-SSL-CERT
    sed 's/^[^ ]* //' "$work/distributions"
  } >"$work/exclude"
  old_exporter=/etc/sysconfig/prometheus-postgres_exporter
  if remote sudo test -f "$old_exporter"; then
    warn "$old_exporter is of a too old monitoring setup: not migrated, enable monitoring again after the migration"
    echo "$old_exporter" >>"$work/exclude"
  fi
}

# Every /etc file of the source's packages that is not config(noreplace): the new image's
# version wins (an empty claim got it from the image first).
list_package_files() {
  say "listing the package-owned configuration files on $SOURCE_FQDN"
  # shellcheck disable=SC2016 # expanded by the source's shell
  remote sudo sh -c 'rpm -qa --qf "[%{FILEFLAGS:fflags}|%{FILENAMES}\n]" | while IFS="|" read -r flags path; do
    case $path in /etc/*) ;; *) continue ;; esac
    case $flags in *n*) continue ;; esac
    if [ -f "$path" ]; then printf "%s\n" "$path"; fi
  done' >"$work/rpm-files" || fail "cannot list the packages' files on $SOURCE_FQDN"
}

# Each claim from its path on the source (the database last handed to the images' postgres).
copy_claims() {
  copied=
  # shellcheck disable=SC2086 # split on purpose: the number of claims
  claims=$(set -- $VOLUME_PATHS && echo $#)
  claim_index=0
  for path in $VOLUME_PATHS; do
    path=${path%/}
    claim_index=$((claim_index + 1))
    target=$TARGET_ROOT$path
    mkdir -p "$target"
    if [ "$path" != /var/lib/pgsql ] && [ -d "$image_root$path" ] && empty "$target"; then
      say "$path: empty claim, copying the new image's content first"
      cp -a "$image_root$path/." "$target/"
    fi
    if excluded "$path"; then
      say "$path: not copied (the container's come from the image)"
      continue
    fi
    if [ "$path" = /var/lib/pgsql ] && [ "$prepare" = true ]; then
      say "$path: left for the final run (the database is running)"
      continue
    fi
    if ! remote sudo test -e "$path"; then
      say "$path: not on $SOURCE_FQDN, left as it is"
      continue
    fi
    volume_rules "$path" >"$work/rules"
    listed=$(sed 's/^- //; s/^P \(.*\)/\1 (kept)/' "$work/rules" | tr '\n' ' ')
    packaged=0
    while IFS= read -r owned; do
      case $owned in "$path"/?*) echo "- /${owned#"$path"/}" >>"$work/rules"; packaged=$((packaged + 1)) ;; esac
    done <"$work/rpm-files"
    say "copying $path (excluding: $listed+ $packaged package-owned files)"
    # These held symlinks in the cloud images: their targets are copied.
    case $path in /var/cache | /var/spacewalk | /var/lib/pgsql) links=-L ;; *) links=-l ;; esac
    claim=$claim_index/$claims
    pull "$path" --delete "$links" --filter="merge $work/rules" "$(from "$path/")" "$target/"
    claim=
    copied="$copied $path"
    if [ "$path" = /var/lib/pgsql ]; then
      synced_pg=$(cat "$target/data/PG_VERSION")
      # The copy keeps the old host's owner (postgres is UID 26 on SUSE); PostgreSQL starts only on
      # a data directory its own user owns, and pg_upgrade runs as the migration image's postgres
      # (server-database-migration-image 00-pgsqlVersionUpgrade.sh @ 90890532 chowns only its
      # target; uyuni-tools c09ccfba pgsqlVersionUpgradeScriptTemplate.go chowned /var/lib/pgsql).
      say "$path: handing the PostgreSQL data to the images' postgres ($pg_owner)"
      chown -R "$pg_owner" "$target"
      if [ "$OLD_PG_VERSION" != "$NEW_PG_VERSION" ]; then
        # Moved aside at once: should anything start PostgreSQL $NEW_PG_VERSION on it before
        # pg_upgrade, it would stamp a newer catalog version and the old server could not start.
        say "moving the PostgreSQL $OLD_PG_VERSION data to data-pg$OLD_PG_VERSION for the upgrade"
        rm -rf "$target/data-pg$OLD_PG_VERSION"
        mv "$target/data" "$target/data-pg$OLD_PG_VERSION"
      fi
    fi
  done
  if [ "$prepare" = false ] && [ -z "${synced_pg:-}" ]; then
    fail "no PostgreSQL data was copied (is /var/lib/pgsql among VOLUME_PATHS?)"
  fi
}

# Each distribution into its new place; cobbler's distro records follow it (the database's
# paths are rewritten by the image's finalize script with MIGRATION=true).
copy_distributions() {
  cobbler_distros=$TARGET_ROOT/var/lib/cobbler/collections/distros
  if on_claim "$dist_root"; then
    while IFS=' ' read -r target base; do
      say "copying distribution $target from $base"
      mkdir -p "$TARGET_ROOT$dist_root/$target"
      pull "$dist_root/$target" --delete "$(from "$base/")" "$TARGET_ROOT$dist_root/$target/"
      if [ -d "$cobbler_distros" ]; then
        pattern=$(printf '%s\n' "$base/" | sed 's/[][\\.*^$|]/\\&/g')
        grep -rlF -e "$base/" "$cobbler_distros" | while IFS= read -r record; do
          edit "$record" -e "s|$pattern|$dist_root/$target/|g"
        done
      fi
    done <"$work/distributions"
    mv "$work/distributions.csv" "$MIGRATION_DIR/distributions.csv"
    say "distributions: $(wc -l <"$MIGRATION_DIR/distributions.csv") copied, listed in $MIGRATION_DIR/distributions.csv"
  elif [ -s "$work/distributions" ]; then
    warn "$dist_root is on no claim: the distributions are not copied"
  fi
}

# The admin's directories copied apart (see copy_dir).
copy_admin_dirs() {
  on_claim /var/lib/cobbler/snippets || warn "/var/lib/cobbler is on no claim: the cobbler snippets are not copied"
  copy_dir /etc/tomcat/conf.d /etc/tomcat/conf.d
  copy_dir /etc/krb5.conf.d /etc/rhn/krb5.conf.d
}

# The monitoring configuration moves to where the container's units read it.
migrate_monitoring() {
  say "migrating the monitoring configuration"
  while IFS=' ' read -r file dir; do
    if on_claim "$dir" && remote sudo test -f "$file"; then
      mkdir -p "$TARGET_ROOT$dir"
      pull "$dir" "$(from "$file")" "$TARGET_ROOT$dir/"
    fi
  done <<'EOF'
/usr/lib/systemd/system/tomcat.service.d/jmx.conf /etc/sysconfig/tomcat/systemd
/usr/lib/systemd/system/taskomatic.service.d/jmx.conf /etc/sysconfig/taskomatic/systemd
/etc/postgres_exporter/postgres_exporter_queries.yaml /etc/sysconfig/prometheus-postgres_exporter
/etc/systemd/system/prometheus-postgres_exporter.service.d/60-server.conf /etc/sysconfig/prometheus-postgres_exporter/systemd
/etc/postgres_exporter/pg_passwd /etc/sysconfig/prometheus-postgres_exporter
EOF
  wants=/etc/systemd/system/multi-user.target.wants
  if on_claim "$wants"; then
    rm -f "$TARGET_ROOT$wants/prometheus-postgres_exporter.service"
    if remote systemctl is-enabled prometheus-postgres_exporter.service >/dev/null; then
      say "enabling prometheus-postgres_exporter.service"
      mkdir -p "$TARGET_ROOT$wants"
      ln -s /usr/lib/systemd/system/prometheus-postgres_exporter.service "$TARGET_ROOT$wants/"
    fi
  fi
}

# Custom trust anchors, for the TypeScript side to mount: not the ones the new pod makes itself
# (uyuni pre-flights-checks.yaml @ 96c86b96 lists them). Names become ConfigMap keys.
copy_anchors() {
  say "copying the custom CA certificates to $MIGRATION_DIR/anchors"
  anchors=$MIGRATION_DIR/anchors
  rm -rf "$anchors"
  mkdir -p "$anchors"
  for dir in /usr/share/pki/trust/anchors /etc/pki/trust/anchors; do
    if remote sudo test -d "$dir"; then
      pull "$anchors" -L --no-owner --no-group --exclude='/LOCAL-RHN-ORG-TRUSTED-SSL-CERT*' --exclude=/DB-RHN-ORG-TRUSTED-SSL-CERT \
        --exclude=/salt-api.crt --exclude='/peripheral_*' --exclude='/hub_*' --exclude='*/' "$(from "$dir/")" "$anchors/"
    fi
  done
  for file in "$anchors"/*; do
    [ -f "$file" ] || continue
    name=${file##*/}
    case $name in
      *[!A-Za-z0-9._-]*)
        key=$(printf '%s' "$name" | tr -c 'A-Za-z0-9._-' _)
        say "anchor '$name' saved as $key"
        mv "$file" "$anchors/$key"
        ;;
    esac
  done
  if [ -n "${ANCHORS_DIR:-}" ]; then
    [ -d "$ANCHORS_DIR" ] || fail "the ca-certs claim is not mounted at $ANCHORS_DIR"
    for file in "$anchors"/*; do
      [ -f "$file" ] || continue
      cp "$file" "$ANCHORS_DIR/"
      say "custom CA ${file##*/} goes to the new server's trust anchors"
    done
  fi
}

# The CA: the deployed one always; the old CA's own certificate and (still encrypted) key when
# /root/ssl-build has them; the server's certificate and key when that CA did not sign it
# (third-party certificates).
copy_ca() {
  say "copying the CA files to $MIGRATION_DIR/ca"
  ca=$MIGRATION_DIR/ca
  rm -rf "$ca"
  mkdir -m 0700 "$ca"
  deployed=
  for file in /etc/pki/trust/anchors/LOCAL-RHN-ORG-TRUSTED-SSL-CERT /srv/www/htdocs/pub/RHN-ORG-TRUSTED-SSL-CERT; do
    if remote sudo test -f "$file"; then
      fetch "$file" "$ca/deployed-ca.crt" 0644
      deployed=$file
      break
    fi
  done
  [ -n "$deployed" ] || fail "$SOURCE_FQDN has no CA in /etc/pki/trust/anchors/LOCAL-RHN-ORG-TRUSTED-SSL-CERT nor in /srv/www/htdocs/pub/RHN-ORG-TRUSTED-SSL-CERT"
  ca_fingerprint_match=false
  if remote sudo test -f /root/ssl-build/RHN-ORG-TRUSTED-SSL-CERT; then
    fetch /root/ssl-build/RHN-ORG-TRUSTED-SSL-CERT "$ca/RHN-ORG-TRUSTED-SSL-CERT" 0644
    if remote sudo test -f /root/ssl-build/RHN-ORG-PRIVATE-SSL-KEY; then
      fetch /root/ssl-build/RHN-ORG-PRIVATE-SSL-KEY "$ca/RHN-ORG-PRIVATE-SSL-KEY" 0600
    else
      warn "/root/ssl-build has the CA certificate but no RHN-ORG-PRIVATE-SSL-KEY"
    fi
    build_fp=$(fingerprint "$ca/RHN-ORG-TRUSTED-SSL-CERT")
    if [ -n "$build_fp" ] && [ "$build_fp" = "$(fingerprint "$ca/deployed-ca.crt")" ]; then
      ca_fingerprint_match=true
    fi
  fi
  if [ "$ca_fingerprint_match" = true ]; then
    third_party_certs=false
    say "the deployed CA ($deployed) is the one of /root/ssl-build"
  else
    third_party_certs=true
    say "the deployed CA ($deployed) is not the one of /root/ssl-build: third-party certificates"
    fetch /etc/pki/tls/certs/spacewalk.crt "$ca/spacewalk.crt" 0644
    fetch /etc/pki/tls/private/spacewalk.key "$ca/spacewalk.key" 0600
  fi
}

# The facts later steps read, from the source and the copied configuration, into $MIGRATION_DIR/data.
record_facts() {
  conf=$TARGET_ROOT/etc/rhn/rhn.conf
  [ -f "$conf" ] || fail "$SOURCE_FQDN has no /etc/rhn/rhn.conf: not an Uyuni server?"

  say "recording the facts in $MIGRATION_DIR/data"
  mkdir -p "$MIGRATION_DIR/source"
  rm -f "$MIGRATION_DIR/source/uyuni-release" "$MIGRATION_DIR/source/susemanager-release"
  for release in uyuni-release susemanager-release; do
    if remote test -f "/etc/$release"; then
      remote cat "/etc/$release" >"$MIGRATION_DIR/source/$release"
    fi
  done
  timezone=$(remote timedatectl show --property=Timezone --value 2>/dev/null) || timezone=
  libc=$(remote ldd --version 2>/dev/null | head -n 1 | sed 's/.*[[:space:]]//') || libc=
  if remote rpm -q --quiet hub-xmlrpc-api; then has_hub=true; else has_hub=false; fi
  if remote systemctl is-enabled tftp.socket >/dev/null; then tftp_enabled=true; else tftp_enabled=false; fi
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
    echo "current_pg_version=${synced_pg:-$source_pg}"
    echo "current_libc_version=$libc"
    echo "db_user=$(conf_value db_user)"
    echo "db_name=$(conf_value db_name)"
    echo "db_port=$(conf_value db_port)"
    echo "report_db_user=$(conf_value report_db_user)"
    echo "has_hub=$has_hub"
    echo "debug_java=$debug_java"
    echo "tftp_enabled=$tftp_enabled"
    echo "ca_fingerprint_match=$ca_fingerprint_match"
    echo "third_party_certs=$third_party_certs"
  } >"$MIGRATION_DIR/data.new"
  mv "$MIGRATION_DIR/data.new" "$MIGRATION_DIR/data"
  cat "$MIGRATION_DIR/data"
}

# The credentials the migrated databases keep, for Job uyuni-import-secrets: never printed.
save_credentials() {
  if [ "$prepare" = false ]; then
    say "saving the database credentials in $MIGRATION_DIR/secrets"
    for key in db_user db_password report_db_user report_db_password; do
      [ -n "$(conf_value "$key")" ] || warn "the old rhn.conf has no $key"
    done
    (
      umask 077
      for key in db_user db_password report_db_user report_db_password; do
        printf '%s=%s\n' "$key" "$(conf_value "$key")"
      done >"$MIGRATION_DIR/secrets.new"
    )
    chmod 0600 "$MIGRATION_DIR/secrets.new"
    mv "$MIGRATION_DIR/secrets.new" "$MIGRATION_DIR/secrets"
  fi
}

# The databases run in the db Deployment, behind the Services db and reportdb; the container
# names itself by java.hostname, serves plain HTTP behind the ingress and finds a mirror at /mirror.
adapt_rhn_conf() {
  say "adapting rhn.conf to the container"
  set_conf db_host db
  set_conf report_db_host reportdb
  # The db container's certificate does not name db nor reportdb: the internal connections run
  # without SSL (uyuni-tools 8eda4d3e pgsqlMigrateScriptTemplate.go, merged as c938fad9; the
  # image's 01-reportdb-fix.sh @ 5b85f664 empties them at start, for these hosts only).
  for key in db_ssl_enabled report_db_ssl_enabled; do
    if grep -q "^[[:space:]]*${key}[[:space:]]*=" "$conf"; then set_conf "$key" 0; fi
  done
  if ! grep -q '^[[:space:]]*java\.hostname[[:space:]]*=' "$conf"; then
    edit "$conf" -e 's/^\([[:space:]]*\)server\.jabber_server\([[:space:]]*=\)/\1java.hostname\2/'
  fi
  set_conf server.no_ssl 1
  if grep -q '^[[:space:]]*server\.susemanager\.fromdir[[:space:]]*=' "$conf"; then
    set_conf server.susemanager.fromdir /mirror
  fi
}

adapt_configuration() {
  say "adapting the cobbler, taskomatic, tomcat and apache configuration to the container"
  cobbler=$TARGET_ROOT/etc/cobbler
  if [ -f "$cobbler/settings.yaml" ]; then
    edit "$cobbler/settings.yaml" -e 's/^client_use_localhost:[[:space:]]*false/client_use_localhost: true/'
  fi
  if [ -d "$cobbler/settings.d" ]; then
    zz=$cobbler/settings.d/zz-uyuni.settings
    touch "$zz"
    if ! grep -qx 'client_use_localhost: true' "$zz"; then
      edit "$zz" -e '/^client_use_localhost:/d'
      [ -z "$(tail -c 1 "$zz")" ] || echo >>"$zz"
      echo 'client_use_localhost: true' >>"$zz"
    fi
  fi
  if [ -f "$TARGET_ROOT/etc/rhn/taskomatic.conf" ]; then
    edit "$TARGET_ROOT/etc/rhn/taskomatic.conf" -e 's/address=[^:]*:/address=*:/'
  fi
  for f in "$TARGET_ROOT"/etc/tomcat/conf.d/*; do
    [ -f "$f" ] || continue
    edit "$f" -e 's/--add-modules java\.annotation,com\.sun\.xml\.bind://' -e 's/-XX:-UseConcMarkSweepGC//'
  done
  if [ -f "$TARGET_ROOT/etc/tomcat/conf.d/remote_debug.conf" ]; then
    edit "$TARGET_ROOT/etc/tomcat/conf.d/remote_debug.conf" -e 's/address=[^:]*:/address=*:/'
  fi
  if [ -f "$TARGET_ROOT/etc/tomcat/server.xml" ]; then
    edit "$TARGET_ROOT/etc/tomcat/server.xml" -e 's|appBase="webapps"|appBase="/usr/share/susemanager/www/tomcat/webapps"|'
  fi
  if [ -f "$TARGET_ROOT/etc/apache2/vhosts.d/vhost-ssl.conf" ]; then
    edit "$TARGET_ROOT/etc/apache2/vhosts.d/vhost-ssl.conf" \
      -e 's|DocumentRoot[[:space:]]*"/srv/www/htdocs"|DocumentRoot "/usr/share/susemanager/www/htdocs"|'
  fi
}

# After a pre-sync, what the final run will still do; after the final run, the setup marker.
finish() {
  if [ "$prepare" = true ]; then
    db_size=$(remote sudo du -sh /var/lib/pgsql | cut -f 1)
    [ -n "$db_size" ] || db_size="size unknown"
    say "pre-sync done. The final run (PREPARE=false) will still: stop spacewalk-service and postgresql on $SOURCE_FQDN;" \
      "copy the PostgreSQL data /var/lib/pgsql ($db_size); send what changed since this run in:$copied and the distributions;" \
      "fetch the CA files and the anchors again; write $MIGRATION_DIR/secrets and the setup marker"
    exit 0
  fi
  # The server container sets itself up at its first start unless it finds this marker.
  say "marking the copied server as set up"
  mkdir -p "${marker%/*}"
  touch "$marker"
  say "done"
}

# The phases, in order.
check_source
quiet_source
write_excludes
list_package_files
copy_claims
copy_distributions
copy_admin_dirs
migrate_monitoring
copy_anchors
copy_ca
record_facts
save_credentials
adapt_rhn_conf
adapt_configuration
finish
