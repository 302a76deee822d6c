/**
 * An "old Uyuni server" for running data-sync.sh for real: a fake tree that the remote side sees
 * as its root, stub commands for what a real server would do (sudo, rpm, systemctl,
 * spacewalk-service, timedatectl, psql, ldd), and two ways to reach it — a real sshd on
 * 127.0.0.1 (startSshd) or a local stand-in for ssh (localSshBin).
 *
 * The remote side: every command runs through `remote-wrapper` (sshd's ForceCommand, or exec'd
 * by the local ssh): in a private mount namespace (`unshare --mount --propagation private`) the
 * fake tree's etc, var, srv and root are bind-mounted read-only over /etc, /var, /srv and /root,
 * and its usr is overlaid (read-only) on /usr, then `sh -c "$SSH_ORIGINAL_COMMAND"` runs with the
 * stubs first on PATH. So the script runs with the real paths of a real server, unchanged, and
 * anything it tried to write on the source would fail. Nothing leaks to the host: the mounts
 * die with the session. Needs root (mount namespaces), as CI is.
 */
import { ChildProcess, spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';

export type Entry = string | { symlink: string } | { text: string; mode: number };
/** Files by absolute path on the old server. */
export type Tree = Record<string, Entry>;

export function writeTree(root: string, tree: Tree): void {
  for (const [p, entry] of Object.entries(tree)) {
    const file = path.join(root, p);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.rmSync(file, { force: true });
    if (typeof entry === 'string') fs.writeFileSync(file, entry);
    else if ('symlink' in entry) fs.symlinkSync(entry.symlink, file);
    else fs.writeFileSync(file, entry.text, { mode: entry.mode });
  }
}

export interface SourceOptions {
  tree: Tree;
  /** What `rpm -qa` lists: [fflags (e.g. 'c', 'cn', ''), path]. */
  rpmFiles: Array<[string, string]>;
  /** What `psql` prints for the distributions' COPY (CSV). */
  distributionsCsv: string;
  /** Units `systemctl is-enabled` says enabled. */
  enabledUnits: string[];
  /** Packages `rpm -q` finds. */
  packages?: string[];
  timezone?: string;
  /** The version in `ldd --version`'s first line. */
  libc?: string;
}

export interface SourceHost {
  /** The fake tree, the remote side's / (etc, var, srv, root, usr). */
  root: string;
  /** The ForceCommand. */
  wrapper: string;
  /** Each stub call, one line: "<stub> <args>". */
  stubLog(): string[];
  /** Each command the client asked for (SSH_ORIGINAL_COMMAND). */
  commands(): string[];
}

const STUBS: Record<string, string> = {
  // Runs the command as root already: only logs who it was asked to be.
  sudo: `#!/bin/sh
echo "sudo $*" >>"$STUB_LOG"
while [ $# -gt 0 ]; do case $1 in -u) shift 2 ;; -*) shift ;; *) break ;; esac; done
exec "$@"
`,
  // rpm -q [--quiet] PKG; rpm -qa --qf FORMAT, rendering %{FILEFLAGS:fflags} and %{FILENAMES}.
  rpm: `#!/bin/sh
echo "rpm $*" >>"$STUB_LOG"
case $1 in
  -q)
    shift
    [ "$1" = --quiet ] && shift
    grep -qxF -e "$1" "$STUB_DATA/packages" ;;
  -qa)
    [ "$2" = --qf ] || { echo "rpm stub: -qa without --qf" >&2; exit 2; }
    body=\${3#\\[}
    body=\${body%\\]}
    rest=$(printf '%s' "$body" | sed 's/%{FILEFLAGS:fflags}//; s/%{FILENAMES}//')
    case $rest in *%*) echo "rpm stub: unsupported format $3" >&2; exit 2 ;; esac
    while IFS= read -r entry; do
      flags=\${entry%%:*} file=\${entry#*:}
      printf '%b' "$(printf '%s' "$body" | sed "s|%{FILEFLAGS:fflags}|$flags|; s|%{FILENAMES}|$file|")"
    done <"$STUB_DATA/rpm-files" ;;
  *) echo "rpm stub: unexpected $*" >&2; exit 2 ;;
esac
`,
  systemctl: `#!/bin/sh
echo "systemctl $*" >>"$STUB_LOG"
case $1 in
  is-enabled) if grep -qxF -e "$2" "$STUB_DATA/enabled"; then echo enabled; else echo disabled; exit 1; fi ;;
  start | stop) ;;
  *) echo "systemctl stub: unexpected $*" >&2; exit 2 ;;
esac
`,
  'spacewalk-service': `#!/bin/sh
echo "spacewalk-service $*" >>"$STUB_LOG"
[ "$1" = stop ] || { echo "spacewalk-service stub: unexpected $*" >&2; exit 2; }
`,
  timedatectl: `#!/bin/sh
echo "timedatectl $*" >>"$STUB_LOG"
[ "$*" = "show --property=Timezone --value" ] || { echo "timedatectl stub: unexpected $*" >&2; exit 2; }
cat "$STUB_DATA/timezone"
`,
  ldd: `#!/bin/sh
echo "ldd $*" >>"$STUB_LOG"
[ "$1" = --version ] || exit 2
printf 'ldd (GNU libc) %s\\nCopyright (C) 2020 Free Software Foundation, Inc.\\n' "$(cat "$STUB_DATA/libc")"
`,
  // Prints the distributions for their COPY, as the postgres user only.
  psql: `#!/bin/sh
echo "psql $*" >>"$STUB_LOG"
case "$*" in *rhnKickstartableTree*'TO STDOUT WITH CSV'*) cat "$STUB_DATA/distributions.csv" ;; *) echo "psql stub: unexpected $*" >&2; exit 2 ;; esac
`,
};

export function sourceHost(dir: string, opts: SourceOptions): SourceHost {
  const root = path.join(dir, 'source');
  const stubs = path.join(dir, 'source-stubs');
  const data = path.join(dir, 'source-stub-data');
  const stubLog = path.join(dir, 'source-stubs.log');
  const commands = path.join(dir, 'source-commands.log');
  for (const d of ['etc', 'var', 'srv', 'root', 'usr']) fs.mkdirSync(path.join(root, d), { recursive: true });
  writeTree(root, opts.tree);
  fs.mkdirSync(stubs, { recursive: true });
  for (const [name, text] of Object.entries(STUBS)) fs.writeFileSync(path.join(stubs, name), text, { mode: 0o755 });
  fs.mkdirSync(data, { recursive: true });
  const lines = (l: string[]) => l.map((x) => `${x}\n`).join('');
  fs.writeFileSync(path.join(data, 'rpm-files'), lines(opts.rpmFiles.map(([f, p]) => `${f}:${p}`)));
  fs.writeFileSync(path.join(data, 'distributions.csv'), opts.distributionsCsv);
  fs.writeFileSync(path.join(data, 'enabled'), lines(opts.enabledUnits));
  fs.writeFileSync(path.join(data, 'packages'), lines(opts.packages ?? []));
  fs.writeFileSync(path.join(data, 'timezone'), `${opts.timezone ?? 'Etc/UTC'}\n`);
  fs.writeFileSync(path.join(data, 'libc'), opts.libc ?? '2.31');
  fs.writeFileSync(stubLog, '');
  fs.writeFileSync(commands, '');
  for (const p of [root, stubs, data, stubLog, commands]) {
    if (/[\s:,'"\\]/.test(p)) throw new Error(`the fake source's path must be plain: ${p}`);
  }
  const wrapper = path.join(dir, 'remote-wrapper');
  fs.writeFileSync(wrapper, `#!/bin/sh
# The remote side of the test's old server: the command in a mount namespace where ${root} is /.
printf '%s\\n' "$SSH_ORIGINAL_COMMAND" >>${commands}
PATH=${stubs}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
STUB_LOG=${stubLog}
STUB_DATA=${data}
export PATH STUB_LOG STUB_DATA
exec unshare --mount --propagation private sh -c '
  set -e
  mount -t overlay overlay -o ro,lowerdir=${root}/usr:/usr /usr
  for d in etc var srv root; do
    mount --bind ${root}/$d /$d
    mount -o remount,bind,ro /$d
  done
  cd /root
  exec sh -c "$SSH_ORIGINAL_COMMAND"
'
`, { mode: 0o755 });
  const read = (f: string) => fs.readFileSync(f, 'utf8').split('\n').filter((l) => l !== '');
  return { root, wrapper, stubLog: () => read(stubLog), commands: () => read(commands) };
}

/**
 * A Job-side bin directory whose `ssh` runs the command through the source's wrapper locally
 * (the transport without sshd: options and host are logged and skipped, the command words
 * joined as sshd would), and whose `rsync` logs its arguments and filter rules before running
 * the real one.
 */
export function localSshBin(dir: string, host: SourceHost, log: string): string {
  const bin = path.join(dir, 'job-bin');
  fs.mkdirSync(bin, { recursive: true });
  const realRsync = which('rsync');
  fs.writeFileSync(log, '');
  fs.writeFileSync(path.join(bin, 'ssh'), `#!/bin/sh
echo "ssh $*" >>${log}
while [ $# -gt 0 ]; do
  case $1 in
    --) shift; break ;;
    -O) exit 0 ;; # the connection master's control: there is none
    -[iplFoe]) shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
shift # the host
SSH_ORIGINAL_COMMAND=$*
export SSH_ORIGINAL_COMMAND
exec ${host.wrapper}
`, { mode: 0o755 });
  fs.writeFileSync(path.join(bin, 'rsync'), `#!/bin/sh
echo "rsync $*" >>${log}
for a; do case $a in --filter=merge\\ *) echo "rules: $(tr '\\n' ';' <"\${a#--filter=merge }")" >>${log} ;; esac; done
exec ${realRsync} "$@"
`, { mode: 0o755 });
  return bin;
}

export function which(cmd: string): string {
  const r = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' });
  const found = r.stdout.trim();
  if (r.status !== 0 || !found) throw new Error(`${cmd} is not installed (Debian package ${cmd === 'sshd' ? 'openssh-server' : cmd})`);
  return found;
}

function run(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 30_000 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.error?.message ?? ''}${r.stderr}`);
  return r.stdout;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = net.connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      c.destroy();
      resolve(ok);
    };
    c.setTimeout(1000, () => done(false));
    c.once('connect', () => done(true));
    c.once('error', () => done(false));
  });
}

function waitExit(p: ChildProcess, ms: number): Promise<boolean> {
  if (p.exitCode !== null || p.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), ms);
    p.once('exit', () => {
      clearTimeout(t);
      resolve(true);
    });
  });
}

/** The PIDs whose parent is `pid` (from /proc). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
      // pid (comm) state ppid …: comm may hold spaces and parentheses.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(e));
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

export interface Sshd {
  port: number;
  pid: number;
  /** The host key line for known_hosts: `[127.0.0.1]:<port> ssh-ed25519 …`. */
  knownHostsLine: string;
  /** The client's private key (its public key is authorized). */
  clientKey: string;
  /** sshd's own log (-e). */
  log(): string;
  /** Stops this sshd by its PID (SIGTERM, SIGKILL after 5 s); never any other. */
  stop(): Promise<void>;
}

/**
 * A private sshd on 127.0.0.1 and a free port, all its files in `dir`: its own host key,
 * PidFile, AuthorizedKeysFile (a client key generated here, `restrict`ed), no PAM, no
 * passwords, ForceCommand = the source's wrapper. The host's own sshd and /etc/ssh are never
 * touched (only the privilege separation directory /run/sshd is created when missing: sshd as
 * root refuses to start without it).
 */
export async function startSshd(dir: string, host: SourceHost): Promise<Sshd> {
  const sshd = fs.existsSync('/usr/sbin/sshd') ? '/usr/sbin/sshd' : which('sshd');
  const d = path.join(dir, 'sshd');
  fs.mkdirSync(d, { recursive: true });
  const hostKey = path.join(d, 'host_ed25519');
  const clientKey = path.join(d, 'client_ed25519');
  run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'uyuni-cdk test host', '-f', hostKey]);
  run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'uyuni-cdk test client', '-f', clientKey]);
  fs.writeFileSync(path.join(d, 'authorized_keys'), `restrict ${fs.readFileSync(`${clientKey}.pub`, 'utf8')}`);
  if (!fs.existsSync('/run/sshd')) fs.mkdirSync('/run/sshd', { mode: 0o755, recursive: true });
  const port = await freePort();
  const config = path.join(d, 'sshd_config');
  fs.writeFileSync(config, [
    `Port ${port}`,
    'ListenAddress 127.0.0.1',
    `HostKey ${hostKey}`,
    `PidFile ${path.join(d, 'sshd.pid')}`,
    `AuthorizedKeysFile ${path.join(d, 'authorized_keys')}`,
    'StrictModes no',
    'UsePAM no',
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'PubkeyAuthentication yes',
    'PermitRootLogin prohibit-password',
    `AllowUsers ${os.userInfo().username}`,
    `ForceCommand ${host.wrapper}`,
    'PrintMotd no',
    'MaxStartups 100:30:200',
    '',
  ].join('\n'));
  run(sshd, ['-t', '-f', config]);
  const logFile = path.join(d, 'sshd.log');
  const out = fs.openSync(logFile, 'a');
  const child = spawn(sshd, ['-D', '-e', '-f', config], { stdio: ['ignore', out, out] });
  fs.closeSync(out);
  const log = () => fs.readFileSync(logFile, 'utf8');
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    // The listener's children are the sessions still open (a connection master of a killed
    // run): they outlive it, so each is ended by its PID too.
    const sessions = childrenOf(child.pid!);
    child.kill('SIGTERM');
    if (!(await waitExit(child, 5000))) {
      child.kill('SIGKILL');
      await waitExit(child, 5000);
    }
    for (const p of sessions) {
      try {
        process.kill(p, 'SIGTERM');
      } catch {
        // gone already
      }
    }
  };
  const deadline = Date.now() + 10_000;
  while (!(await accepts(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`sshd did not come up on 127.0.0.1:${port}: ${log()}`);
    }
    await sleep(50);
  }
  const pub = fs.readFileSync(`${hostKey}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ');
  return { port, pid: child.pid!, knownHostsLine: `[127.0.0.1]:${port} ${pub}`, clientKey, log, stop };
}

/** The Job's /root/.ssh for a test sshd: key, key.pub, known_hosts and a config. */
export function jobSshDir(dir: string, sshd: Sshd): string {
  const d = path.join(dir, 'job-ssh');
  fs.mkdirSync(d, { recursive: true, mode: 0o700 });
  fs.copyFileSync(sshd.clientKey, path.join(d, 'key'));
  fs.chmodSync(path.join(d, 'key'), 0o600);
  fs.copyFileSync(`${sshd.clientKey}.pub`, path.join(d, 'key.pub'));
  fs.writeFileSync(path.join(d, 'known_hosts'), `${sshd.knownHostsLine}\n`);
  fs.writeFileSync(path.join(d, 'config'), 'Host *\n  ConnectTimeout 10\n  ServerAliveInterval 15\n  IdentitiesOnly yes\n');
  return d;
}

/** A CA (certificate and, encrypted with `password`, its key) made with openssl. */
export function makeCa(dir: string, name: string, password: string): { cert: string; key: string } {
  const key = path.join(dir, `${name}.key`);
  const cert = path.join(dir, `${name}.crt`);
  run('openssl', ['genpkey', '-algorithm', 'ed25519', '-aes256', '-pass', `pass:${password}`, '-out', key]);
  run('openssl', ['req', '-x509', '-key', key, '-passin', `pass:${password}`, '-subj', `/CN=${name}`, '-days', '2', '-out', cert]);
  return { cert: fs.readFileSync(cert, 'utf8'), key: fs.readFileSync(key, 'utf8') };
}

/** The passwords of the standard old server: none may show up in a log. */
export const OLD_SECRETS = {
  db: 's3cret-db-pw', report: 's3cret-report-pw', exporter: 'exporter-s3cret', ca: 'ca-passphrase',
} as const;

export const OLD_RHN_CONF = [
  'db_backend = postgresql', 'db_user = spacewalk', `db_password = ${OLD_SECRETS.db}`, 'db_name = susemanager',
  'db_host = localhost', 'db_port = 5432', 'report_db_host = localhost', 'report_db_user = pythia_susemanager',
  `report_db_password = ${OLD_SECRETS.report}`, 'report_db_name = reportdb', 'server.jabber_server = uyuni-old.test',
  'server.susemanager.fromdir = /srv/mirror', '',
].join('\n');

/**
 * A SUSE Manager 4.3 host with PostgreSQL 14, its own CA (in /root/ssl-build, deployed), two
 * distributions (one inside /srv/www, one outside any claim) and one the database knows but the
 * disk lacks, package-owned configuration files with and without config(noreplace), and the
 * host state the migration must leave behind.
 */
export function oldServer(dir: string): SourceOptions & { ca: { cert: string; key: string } } {
  const ca = makeCa(dir, 'old-ca', OLD_SECRETS.ca);
  const tree: Tree = {
    '/etc/susemanager-release': 'SUSE Manager release 4.3 (4.3.14)\n',
    '/etc/rhn/rhn.conf': OLD_RHN_CONF,
    '/etc/rhn/taskomatic.conf': 'JAVA_OPTS="-agentlib:jdwp=transport=dt_socket,address=localhost:8001,server=y,suspend=n"\n',
    '/etc/rhn/packaged.conf': 'packaged, not noreplace\n',
    '/etc/rhn/noreplace.conf': 'packaged, noreplace\n',
    '/etc/rhn/admin.conf': 'nobody\'s package\n',
    '/etc/apache2/httpd.conf': 'the old package\'s httpd.conf\n',
    '/etc/apache2/vhosts.d/vhost-ssl.conf': '<VirtualHost _default_:443>\n  DocumentRoot "/srv/www/htdocs"\n</VirtualHost>\n',
    '/etc/apache2/vhosts.d/cobbler.conf': 'old cobbler vhost\n',
    '/etc/tomcat/server.xml': '<Host name="localhost" appBase="webapps" unpackWARs="true"/>\n',
    '/etc/tomcat/tomcat.conf': 'old tomcat defaults\n',
    '/etc/tomcat/conf.d/tomcat_java_opts.conf':
      'JAVA_OPTS="$JAVA_OPTS --add-modules java.annotation,com.sun.xml.bind:java.xml.bind -XX:-UseConcMarkSweepGC -Xmx4G"\n',
    '/etc/tomcat/conf.d/remote_debug.conf': 'JAVA_OPTS="$JAVA_OPTS -agentlib:jdwp=transport=dt_socket,address=localhost:8000,server=y,suspend=n"\n',
    '/etc/cobbler/settings.yaml': 'client_use_localhost: false\nserver: 127.0.0.1\n',
    '/etc/cobbler/settings.d/zz-uyuni.settings': 'uyuni_authentication_endpoint: http://localhost\n',
    '/etc/salt/master.d/susemanager.conf': 'file_roots: {}\n',
    '/etc/salt/master.d/py27-compat-salt.conf': 'py2 compat\n',
    '/etc/sysconfig/rhn/up2date': 'serverURL=https://uyuni-old.test/XMLRPC\n',
    '/etc/sysconfig/rhn/schema-upgrade/20-old.sql': 'select 1;\n',
    '/etc/sysconfig/tomcat': 'CATALINA_OPTS=old\n',
    '/etc/sysconfig/prometheus-postgres_exporter': 'DATA_SOURCE_NAME=old\n',
    '/etc/systemd/system/multi-user.target.wants/sshd.service': { symlink: '/usr/lib/systemd/system/sshd.service' },
    '/etc/systemd/system/sockets.target.wants/tftp.socket': { symlink: '/usr/lib/systemd/system/tftp.socket' },
    '/etc/systemd/system/prometheus-postgres_exporter.service.d/60-server.conf': '[Service]\nEnvironment=old\n',
    '/etc/postgres_exporter/postgres_exporter_queries.yaml': 'queries: {}\n',
    '/etc/postgres_exporter/pg_passwd': `${OLD_SECRETS.exporter}\n`,
    '/etc/krb5.conf.d/realm.conf': '[realms]\n',
    '/etc/pki/trust/anchors/LOCAL-RHN-ORG-TRUSTED-SSL-CERT': { symlink: '/srv/www/htdocs/pub/RHN-ORG-TRUSTED-SSL-CERT' },
    '/etc/pki/trust/anchors/corp-root.pem': 'corp root\n',
    '/etc/pki/trust/anchors/partner ca.pem': 'partner\n',
    '/etc/pki/trust/anchors/salt-api.crt': 'made by the new pod\n',
    '/etc/pki/tls/certs/spacewalk.crt': 'server certificate\n',
    '/etc/pki/tls/private/spacewalk.key': { text: 'server key\n', mode: 0o600 },
    '/usr/share/pki/trust/anchors/vendor.pem': 'vendor\n',
    '/usr/lib/systemd/system/tomcat.service.d/jmx.conf': '[Service]\nEnvironment=JMX\n',
    '/root/ssl-build/RHN-ORG-TRUSTED-SSL-CERT': ca.cert,
    '/root/ssl-build/RHN-ORG-PRIVATE-SSL-KEY': { text: ca.key, mode: 0o600 },
    '/root/.mgr-sync': 'mgr-sync credentials\n',
    '/srv/www/htdocs/index.html': 'old index\n',
    '/srv/www/htdocs/pub/RHN-ORG-TRUSTED-SSL-CERT': ca.cert,
    '/srv/www/htdocs/pub/sles15/boot/linux': 'sles kernel\n',
    '/var/distros/centos7/images/pxeboot/vmlinuz': 'centos kernel\n',
    '/var/lib/pgsql/data/PG_VERSION': '14\n',
    '/var/lib/pgsql/data/base/1/1259': 'table',
    '/var/lib/pgsql/data/postmaster.pid': '4242\n',
    '/var/spacewalk/packages/1/a.rpm': 'rpm',
    '/var/spacewalk/systems/1/x': 'system',
    '/var/cache/zypp/raw/repo.xml': 'zypp',
    '/var/cache/rhn/reposync/x': 'reposync',
    '/var/cache/rhn/cache.db': 'cache',
    '/var/log/lastlog': 'lastlog',
    '/var/log/journal/x/system.journal': 'journal',
    '/var/log/rhn/rhn_web_ui.log': 'log',
    '/var/lib/cobbler/snippets/spacewalk/1/my_snippet': 'snippet\n',
    '/var/lib/cobbler/collections/distros/centos7.json': '{"kernel": "/var/distros/centos7/images/pxeboot/vmlinuz", "name": "centos7"}\n',
    '/var/lib/cobbler/collections/distros/sles15.json': '{"kernel": "/srv/www/htdocs/pub/sles15/boot/linux", "name": "sles15"}\n',
    '/srv/tftpboot/pxelinux.0': 'pxe',
    '/srv/salt/top.sls': 'base: {}\n',
    '/srv/pillar/top.sls': 'base: {}\n',
  };
  return {
    ca,
    tree,
    rpmFiles: [
      ['c', '/etc/rhn/packaged.conf'], ['cn', '/etc/rhn/noreplace.conf'], ['', '/etc/apache2/httpd.conf'],
      ['cn', '/etc/apache2/vhosts.d/vhost-ssl.conf'], ['cn', '/etc/tomcat/server.xml'],
      ['c', '/etc/tomcat/conf.d/tomcat_java_opts.conf'], ['', '/etc/rhn'], ['c', '/etc/rhn/not-there.conf'],
      ['d', '/usr/share/doc/packages/spacewalk/README'],
    ],
    distributionsCsv: '1-centos7,/var/distros/centos7\n2-sles15,/srv/www/htdocs/pub/sles15/\n3-gone,/var/distros/missing\n',
    enabledUnits: ['tftp.socket', 'prometheus-postgres_exporter.service'],
    packages: [],
    timezone: 'Europe/Berlin',
    libc: '2.31',
  };
}

/** The new image's own files the claims start from (IMAGE_ROOT). */
export const IMAGE_TREE: Tree = {
  '/etc/apache2/httpd.conf': 'the new image\'s httpd.conf\n',
  '/etc/apache2/image-only.conf': 'not on the old server: removed by --delete\n',
  '/etc/systemd/system/multi-user.target.wants/tomcat.service': { symlink: '/usr/lib/systemd/system/tomcat.service' },
  '/etc/rhn/krb5.conf.d/image-default.conf': 'the image\'s\n',
};
