/**
 * data-sync.sh for real, over ssh to a real sshd on 127.0.0.1: a pre-sync (PREPARE=true) of a
 * fake old SUSE Manager server while it "runs", then the final run that stops it and sends only
 * the delta. The old server is a fake tree the remote side sees as its / (test/helpers/sshd.ts:
 * sshd's ForceCommand runs each command in a private mount namespace), with stubs for sudo,
 * rpm, systemctl, spacewalk-service, timedatectl, psql and ldd. The Job side is the script
 * itself with the real ssh and rsync, the claims in a temp dir (TARGET_ROOT), the key and
 * known_hosts in SSH_DIR. Needs root and the Debian packages openssh-server, openssh-client,
 * rsync, openssl (and util-linux for unshare).
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { readScript } from '../src/constructs/script-job';
import { FILE_MARK, parseProgress, PROGRESS_MARK } from '../src/runtime/apply/step-logs';
import { LEGACY_DB_VOLUME, SERVER_VOLUMES } from '../src/model/volumes';
import {
  IMAGE_TREE, jobSshDir, OLD_SECRETS, oldServer, SourceHost, sourceHost, Sshd, startSshd, writeTree,
} from './helpers/sshd';

/** The claims the migrate plan gives the Job (SYNCED_VOLUMES: the server's but ca-certs, and var-pgsql). */
const VOLUME_PATHS = [...SERVER_VOLUMES.filter((v) => v.name !== 'ca-certs'), LEGACY_DB_VOLUME].map((v) => v.mountPath);

interface Run { status: number | null; stdout: string; stderr: string }

const modeOf = (p: string) => fs.statSync(p).mode & 0o7777;
const read = (p: string) => fs.readFileSync(p, 'utf8');

/** The itemized transfers (rsync -i: `@file >f…` lines) printed after a "copying <path>" line, up to the next message. */
function transfers(stdout: string, section?: string): string[] {
  const out: string[] = [];
  let inSection = section === undefined;
  for (const line of stdout.split('\n')) {
    if (/^uyuni-data-(pre)?sync: /.test(line)) {
      if (section !== undefined) inSection = line.startsWith(`uyuni-data-sync: copying ${section} (`);
      continue;
    }
    if (inSection && line.startsWith('@file >f')) out.push(line.replace(/^@file \S+ /, ''));
  }
  return out;
}

const EXPORTER_WARNING = 'uyuni-data-sync: warning: /etc/sysconfig/prometheus-postgres_exporter is of a too old monitoring setup: '
  + 'not migrated, enable monitoring again after the migration';

describe('data-sync.sh against a real sshd on 127.0.0.1 (a fake old server): pre-sync, then the final run', () => {
  let dir = '';
  let host: SourceHost;
  let sshd: Sshd | undefined;
  let ca: { cert: string; key: string };
  let target = '';
  let mig = '';
  let env: Record<string, string> = {};
  let pre: Run;
  let final: Run;

  const sync = (extra: Record<string, string>): Run => {
    const r = spawnSync('sh', ['-c', readScript('data-sync.sh')], {
      encoding: 'utf8', timeout: 120_000, env: { ...env, ...extra },
    });
    if (r.error) throw r.error;
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  };

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'uyuni-cdk-sshd-'));
    const server = oldServer(dir);
    ca = server.ca;
    host = sourceHost(dir, server);
    sshd = await startSshd(dir, host);
    const image = path.join(dir, 'image');
    writeTree(image, IMAGE_TREE);
    target = path.join(dir, 'mnt');
    mig = path.join(dir, 'migration-data');
    fs.mkdirSync(mig);
    env = {
      PATH: process.env.PATH!,
      SOURCE_FQDN: '127.0.0.1',
      SOURCE_USER: os.userInfo().username,
      SOURCE_PORT: String(sshd.port),
      VOLUME_PATHS: VOLUME_PATHS.join(' '),
      TARGET_ROOT: target,
      OLD_PG_VERSION: '14',
      NEW_PG_VERSION: '18',
      MIGRATION_DIR: mig,
      SSH_DIR: jobSshDir(dir, sshd),
      IMAGE_ROOT: image,
      ANCHORS_DIR: path.join(target, 'etc/pki/trust/anchors'),
    };
    fs.mkdirSync(env.ANCHORS_DIR, { recursive: true });
  }, 60_000);

  afterAll(async () => {
    await sshd?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('logs in with the generated key, known_hosts and SOURCE_PORT, nothing else', () => {
    const r = sync({ OLD_PG_VERSION: '13' });
    expect(r.stderr).toBe('uyuni-data-sync: 127.0.0.1 runs PostgreSQL 14, the configuration says migration.postgresql.from: 13\n');
    expect(r.status).toBe(1);
    expect(sshd!.log()).toMatch(/Accepted publickey for \S+ from 127\.0\.0\.1/);
    expect(host.stubLog().filter((l) => /^(systemctl|spacewalk-service) /.test(l))).toEqual([]);
  });

  describe('PREPARE=true: while the old server runs', () => {
    let stubs: string[] = [];
    beforeAll(() => {
      pre = sync({ PREPARE: 'true' });
      stubs = host.stubLog();
    }, 150_000);

    it('succeeds, as uyuni-data-presync', () => {
      expect(pre.stderr).toBe(`${EXPORTER_WARNING.replace('uyuni-data-sync', 'uyuni-data-presync')}\n`);
      expect(pre.status).toBe(0);
      expect(pre.stdout).toContain('uyuni-data-presync: connecting to ');
      expect(pre.stdout).not.toContain('uyuni-data-sync: ');
    });

    it('stops no service on the source (it only makes sure its database runs, for the distributions)', () => {
      const services = stubs.filter((l) => /^(systemctl (start|stop)|spacewalk-service) /.test(l));
      expect(services).toEqual(['systemctl start postgresql']);
      expect(stubs).toContain('sudo -u postgres psql -X -q -d susemanager -c COPY (SELECT MIN(CONCAT(org_id,\'-\',label)) AS target, '
        + 'base_path FROM rhnKickstartableTree GROUP BY base_path) TO STDOUT WITH CSV');
    });

    it('copies no database, writes no setup marker and no credentials', () => {
      expect(fs.readdirSync(path.join(target, 'var/lib/pgsql'))).toEqual([]);
      expect(fs.existsSync(path.join(target, 'var/spacewalk/.MANAGER_SETUP_COMPLETE'))).toBe(false);
      expect(fs.existsSync(path.join(mig, 'secrets'))).toBe(false);
    });

    it('copies everything else, the distributions too', () => {
      expect(read(path.join(target, 'var/spacewalk/packages/1/a.rpm'))).toBe('rpm');
      expect(read(path.join(target, 'srv/www/distributions/1-centos7/images/pxeboot/vmlinuz'))).toBe('centos kernel\n');
      expect(read(path.join(mig, 'distributions.csv'))).toContain('1-centos7,');
      expect(read(path.join(mig, 'data'))).toContain('current_pg_version=14\n');
    });

    it('says what the final run will still copy', () => {
      expect(pre.stdout).toMatch(/uyuni-data-presync: pre-sync done\. The final run \(PREPARE=false\) will still: stop spacewalk-service and postgresql on 127\.0\.0\.1; copy the PostgreSQL data \/var\/lib\/pgsql \(\S+\); send what changed since this run in: \/var\/lib\/cobbler .*\/var\/spacewalk .*\/etc\/rhn and the distributions;/);
    });
  });

  describe('then the final run: stops the source and sends the delta', () => {
    let stubs: string[] = [];
    let commands: string[] = [];
    beforeAll(() => {
      const stubsBefore = host.stubLog().length;
      const commandsBefore = host.commands().length;
      // The old server went on working after the pre-sync.
      writeTree(host.root, { '/var/spacewalk/packages/2/new.rpm': 'new package' });
      final = sync({});
      stubs = host.stubLog().slice(stubsBefore);
      commands = host.commands().slice(commandsBefore);
    }, 150_000);

    it('succeeds', () => {
      expect(final.stderr).toBe(`${EXPORTER_WARNING}\n`);
      expect(final.status).toBe(0);
      expect(final.stdout).toContain('uyuni-data-sync: done');
      expect(`${pre.stdout}${final.stdout}`).not.toMatch(/cannot delete|error/i);
    });

    it('prints messages, each file rsync sent as an @file line and each claim\'s progress as @progress lines the runtime reads', () => {
      for (const r of [pre, final]) {
        const other = r.stdout.split('\n').filter((l) => l !== '' && !/^uyuni-data-(pre)?sync: /.test(l) && !l.startsWith(FILE_MARK) && !l.startsWith(PROGRESS_MARK));
        // the facts file is printed as it is written (key=value)
        expect(other.filter((l) => !/^[a-z_]+=/.test(l))).toEqual([]);
      }
      const lines = final.stdout.split('\n');
      const copied = lines.map((l) => /^uyuni-data-sync: copying (\/\S+) \(/.exec(l)?.[1]).filter((p): p is string => p !== undefined);
      expect(copied.length).toBeGreaterThan(10);
      const done = lines.map((l) => parseProgress(l)).filter((p) => p?.done);
      // one last line per claim copied, numbered among the Job's claims
      expect(done.filter((p) => p!.claim).map((p) => [p!.claim, p!.path])).toEqual(copied.map((p) => [`${VOLUME_PATHS.map((v) => v.replace(/\/$/, '')).indexOf(p) + 1}/${VOLUME_PATHS.length}`, p]));
      const spacewalk = done.find((p) => p!.path === '/var/spacewalk')!;
      expect(spacewalk.percent).toBe(100);
      expect(spacewalk.bytes).toBeGreaterThan(0);
      expect(spacewalk.rate).toMatch(/^[\d.]+[kMGT]?B\/s$/);
      // the distributions and the directories copied apart report under their own path
      expect(done.filter((p) => !p!.claim).map((p) => p!.path)).toEqual(expect.arrayContaining(['/srv/www/distributions/1-centos7', '/etc/rhn/krb5.conf.d', `${mig}/anchors`]));
      expect(lines.filter((l) => l.startsWith(PROGRESS_MARK)).every((l) => parseProgress(l))).toBe(true);
    });

    it('stops spacewalk-service, exports the distributions, stops postgresql, all before the first rsync', () => {
      expect(stubs.filter((l) => /^(systemctl (start|stop)|spacewalk-service|sudo -u postgres) /.test(l)).map((l) => l.replace(/ -X.*/, ''))).toEqual([
        'spacewalk-service stop', 'systemctl start postgresql', 'sudo -u postgres psql', 'systemctl stop postgresql',
      ]);
      const firstRsync = commands.findIndex((c) => c.startsWith('sudo rsync --server'));
      expect(firstRsync).toBeGreaterThan(commands.findIndex((c) => c.includes('\'systemctl\' \'stop\' \'postgresql\'')));
    });

    it('sends only the delta: the file added since, the database, and what the pre-sync had adapted', () => {
      expect(transfers(final.stdout, '/var/spacewalk')).toEqual(['packages/2/new.rpm']);
      expect(transfers(final.stdout, '/var/lib/pgsql').sort()).toEqual(['data/PG_VERSION', 'data/base/1/1259']);
      const all = transfers(final.stdout);
      for (const unchanged of ['packages/1/a.rpm', 'htdocs/index.html', 'images/pxeboot/vmlinuz', 'boot/linux', 'spacewalk/1/my_snippet', 'pxelinux.0']) {
        expect(all).not.toContain(unchanged);
      }
      // The pre-sync's rewrites made these differ from the source: sent again, adapted again.
      expect(transfers(final.stdout, '/etc/rhn')).toEqual(['rhn.conf', 'taskomatic.conf']);
      expect(transfers(final.stdout, '/etc/sysconfig')).toEqual([]);
      expect(read(path.join(target, 'var/spacewalk/packages/2/new.rpm'))).toBe('new package');
    });

    it('moves the PostgreSQL 14 data aside for pg_upgrade, without the old postmaster state', () => {
      const pgsql = path.join(target, 'var/lib/pgsql');
      expect(fs.readdirSync(pgsql)).toEqual(['data-pg14']);
      expect(read(path.join(pgsql, 'data-pg14/PG_VERSION'))).toBe('14\n');
      expect(read(path.join(pgsql, 'data-pg14/base/1/1259'))).toBe('table');
      expect(fs.existsSync(path.join(pgsql, 'data-pg14/postmaster.pid'))).toBe(false);
    });

    it('copies the claims\' content from the source', () => {
      for (const [p, text] of Object.entries({
        'var/spacewalk/systems/1/x': 'system', 'srv/www/htdocs/index.html': 'old index\n', 'var/cache/rhn/cache.db': 'cache',
        'var/log/rhn/rhn_web_ui.log': 'log', 'srv/tftpboot/pxelinux.0': 'pxe', 'srv/salt/top.sls': 'base: {}\n',
        'var/lib/cobbler/snippets/spacewalk/1/my_snippet': 'snippet\n', 'etc/salt/master.d/susemanager.conf': 'file_roots: {}\n',
        'etc/sysconfig/rhn/up2date': 'serverURL=https://uyuni-old.test/XMLRPC\n',
        'etc/rhn/noreplace.conf': 'packaged, noreplace\n', 'etc/rhn/admin.conf': 'nobody\'s package\n',
      })) expect([p, read(path.join(target, p))]).toEqual([p, text]);
    });

    it('leaves out the package-owned /etc files that are not config(noreplace): the new image\'s version stays', () => {
      expect(fs.existsSync(path.join(target, 'etc/rhn/packaged.conf'))).toBe(false);
      expect(read(path.join(target, 'etc/apache2/httpd.conf'))).toBe('the new image\'s httpd.conf\n');
      // What the image has and the source lacks goes (rsync --delete), as a directory the package owns does not.
      expect(fs.existsSync(path.join(target, 'etc/apache2/image-only.conf'))).toBe(false);
      // conf.d is copied apart, whoever owns its files.
      expect(fs.existsSync(path.join(target, 'etc/tomcat/conf.d/tomcat_java_opts.conf'))).toBe(true);
    });

    it('leaves out the old host\'s state: systemd units, caches, logs, obsolete configuration, the old CA in pub', () => {
      for (const p of [
        'etc/systemd/system/multi-user.target.wants/sshd.service', 'etc/systemd/system/sockets.target.wants/tftp.socket',
        'var/cache/zypp/raw', 'var/cache/rhn/reposync/x', 'var/log/lastlog', 'var/log/journal', 'etc/tomcat/tomcat.conf',
        'etc/apache2/vhosts.d/cobbler.conf', 'etc/salt/master.d/py27-compat-salt.conf', 'etc/sysconfig/rhn/schema-upgrade',
        'srv/www/htdocs/pub/RHN-ORG-TRUSTED-SSL-CERT', 'srv/www/htdocs/pub/sles15', 'root',
      ]) expect([p, fs.existsSync(path.join(target, p))]).toEqual([p, false]);
      expect(fs.statSync(path.join(target, 'etc/sysconfig/tomcat')).isDirectory()).toBe(true);
      // The systemd claims keep the image's units, plus the exporter the source had enabled.
      expect(fs.readdirSync(path.join(target, 'etc/systemd/system/multi-user.target.wants')).sort())
        .toEqual(['prometheus-postgres_exporter.service', 'tomcat.service']);
      expect(fs.readlinkSync(path.join(target, 'etc/systemd/system/multi-user.target.wants/prometheus-postgres_exporter.service')))
        .toBe('/usr/lib/systemd/system/prometheus-postgres_exporter.service');
    });

    it('copies each distribution into /srv/www/distributions/<target>, records them, points cobbler there', () => {
      const dists = path.join(target, 'srv/www/distributions');
      expect(fs.readdirSync(dists).sort()).toEqual(['1-centos7', '2-sles15']);
      expect(read(path.join(dists, '2-sles15/boot/linux'))).toBe('sles kernel\n');
      expect(read(path.join(mig, 'distributions.csv'))).toBe('1-centos7,/var/distros/centos7,/srv/www/distributions/1-centos7\n'
        + '2-sles15,/srv/www/htdocs/pub/sles15/,/srv/www/distributions/2-sles15\n');
      expect(modeOf(path.join(mig, 'distributions.csv'))).toBe(0o644);
      const distros = path.join(target, 'var/lib/cobbler/collections/distros');
      expect(read(path.join(distros, 'centos7.json'))).toBe('{"kernel": "/srv/www/distributions/1-centos7/images/pxeboot/vmlinuz", "name": "centos7"}\n');
      expect(read(path.join(distros, 'sles15.json'))).toBe('{"kernel": "/srv/www/distributions/2-sles15/boot/linux", "name": "sles15"}\n');
      expect(final.stdout).toContain('uyuni-data-sync: distribution 3-gone: /var/distros/missing is not on 127.0.0.1, skipped');
    });

    it('copies krb5.conf.d into /etc/rhn and moves the monitoring configuration', () => {
      expect(fs.readdirSync(path.join(target, 'etc/rhn/krb5.conf.d'))).toEqual(['realm.conf']);
      const sysconfig = path.join(target, 'etc/sysconfig');
      expect(read(path.join(sysconfig, 'tomcat/systemd/jmx.conf'))).toBe('[Service]\nEnvironment=JMX\n');
      expect(fs.readdirSync(path.join(sysconfig, 'prometheus-postgres_exporter')).sort()).toEqual(['pg_passwd', 'postgres_exporter_queries.yaml', 'systemd']);
      expect(read(path.join(sysconfig, 'prometheus-postgres_exporter/systemd/60-server.conf'))).toBe('[Service]\nEnvironment=old\n');
      expect(fs.existsSync(path.join(sysconfig, 'taskomatic'))).toBe(false);
    });

    it('copies the custom CA anchors into migration-data/anchors, without those the new pod makes', () => {
      const anchors = path.join(mig, 'anchors');
      expect(fs.readdirSync(anchors).sort()).toEqual(['corp-root.pem', 'partner_ca.pem', 'vendor.pem']);
      expect(read(path.join(anchors, 'partner_ca.pem'))).toBe('partner\n');
      // ... and into the ca-certs claim, where the new server's update-ca-certificates reads them.
      expect(fs.readdirSync(env.ANCHORS_DIR).sort()).toEqual(['corp-root.pem', 'partner_ca.pem', 'vendor.pem']);
    });

    it('copies the CA: the deployed one, the ssl-build one with its still encrypted key (0600); the fingerprints match', () => {
      const dir0 = path.join(mig, 'ca');
      expect(modeOf(dir0)).toBe(0o700);
      expect(fs.readdirSync(dir0).sort()).toEqual(['RHN-ORG-PRIVATE-SSL-KEY', 'RHN-ORG-TRUSTED-SSL-CERT', 'deployed-ca.crt']);
      expect(read(path.join(dir0, 'deployed-ca.crt'))).toBe(ca.cert);
      expect(read(path.join(dir0, 'RHN-ORG-TRUSTED-SSL-CERT'))).toBe(ca.cert);
      expect(read(path.join(dir0, 'RHN-ORG-PRIVATE-SSL-KEY'))).toBe(ca.key);
      expect(ca.key).toContain('-----BEGIN ENCRYPTED PRIVATE KEY-----');
      expect(modeOf(path.join(dir0, 'RHN-ORG-PRIVATE-SSL-KEY'))).toBe(0o600);
    });

    it('writes the facts, exactly, with no password', () => {
      expect(read(path.join(mig, 'data'))).toBe([
        'source_fqdn=127.0.0.1', 'fqdn=uyuni-old.test', 'timezone=Europe/Berlin', 'current_pg_version=14',
        'current_libc_version=2.31', 'db_user=spacewalk', 'db_name=susemanager', 'db_port=5432',
        'report_db_user=pythia_susemanager', 'has_hub=false', 'debug_java=true', 'tftp_enabled=true',
        'ca_fingerprint_match=true', 'third_party_certs=false', '',
      ].join('\n'));
      expect(read(path.join(mig, 'source/susemanager-release'))).toBe('SUSE Manager release 4.3 (4.3.14)\n');
    });

    it('writes the database credentials to migration-data/secrets, mode 0600, and prints no secret in either run', () => {
      const secrets = path.join(mig, 'secrets');
      expect(modeOf(secrets)).toBe(0o600);
      expect(read(secrets)).toBe(`db_user=spacewalk\ndb_password=${OLD_SECRETS.db}\n`
        + `report_db_user=pythia_susemanager\nreport_db_password=${OLD_SECRETS.report}\n`);
      const keyBody = ca.key.split('\n')[1];
      for (const r of [pre, final]) {
        for (const s of [OLD_SECRETS.db, OLD_SECRETS.report, OLD_SECRETS.exporter, keyBody]) {
          expect(r.stdout).not.toContain(s);
          expect(r.stderr).not.toContain(s);
        }
      }
    });

    it('adapts rhn.conf to the container', () => {
      expect(read(path.join(target, 'etc/rhn/rhn.conf')).split('\n')).toEqual([
        'db_backend = postgresql', 'db_user = spacewalk', `db_password = ${OLD_SECRETS.db}`, 'db_name = susemanager',
        'db_host = db', 'db_port = 5432', 'report_db_host = reportdb', 'report_db_user = pythia_susemanager',
        `report_db_password = ${OLD_SECRETS.report}`, 'report_db_name = reportdb', 'java.hostname = uyuni-old.test',
        'server.susemanager.fromdir = /mirror', 'server.no_ssl = 1', '',
      ]);
    });

    it('adapts cobbler, taskomatic, tomcat and apache to the container', () => {
      const t = (p: string) => read(path.join(target, p));
      expect(t('etc/cobbler/settings.yaml')).toBe('client_use_localhost: true\nserver: 127.0.0.1\n');
      expect(t('etc/cobbler/settings.d/zz-uyuni.settings')).toBe('uyuni_authentication_endpoint: http://localhost\nclient_use_localhost: true\n');
      expect(t('etc/rhn/taskomatic.conf')).toBe('JAVA_OPTS="-agentlib:jdwp=transport=dt_socket,address=*:8001,server=y,suspend=n"\n');
      expect(t('etc/tomcat/conf.d/remote_debug.conf')).toBe('JAVA_OPTS="$JAVA_OPTS -agentlib:jdwp=transport=dt_socket,address=*:8000,server=y,suspend=n"\n');
      expect(t('etc/tomcat/conf.d/tomcat_java_opts.conf')).toBe('JAVA_OPTS="$JAVA_OPTS java.xml.bind  -Xmx4G"\n');
      expect(t('etc/tomcat/server.xml')).toBe('<Host name="localhost" appBase="/usr/share/susemanager/www/tomcat/webapps" unpackWARs="true"/>\n');
      expect(t('etc/apache2/vhosts.d/vhost-ssl.conf')).toBe('<VirtualHost _default_:443>\n  DocumentRoot "/usr/share/susemanager/www/htdocs"\n</VirtualHost>\n');
    });

    it('marks the copied server as set up, last', () => {
      expect(fs.statSync(path.join(target, 'var/spacewalk/.MANAGER_SETUP_COMPLETE')).isFile()).toBe(true);
      const lines = final.stdout.trim().split('\n');
      expect(lines.slice(-2)).toEqual(['uyuni-data-sync: marking the copied server as set up', 'uyuni-data-sync: done']);
    });
  });
});
