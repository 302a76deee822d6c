import { ConfigError, parseConfig, plansOf } from '../src/config/load';
import { defaultConfigWith } from './helpers/synth';

/** The problems a configuration is refused with (fails the test when it is accepted). */
function problems(yamlText: string): string[] {
  try {
    parseConfig(yamlText, 'bad.yaml');
  } catch (e) {
    if (e instanceof ConfigError) return [...e.problems];
    throw e;
  }
  throw new Error('the configuration was accepted');
}

const withChanges = (changes: Record<string, unknown>) => problems(defaultConfigWith(changes));

describe('configuration', () => {
  it('accepts the committed default and fills in the documented defaults', () => {
    const config = parseConfig(defaultConfigWith());
    expect(config.namespace).toBe('uyuni');
    expect(config.tftp).toEqual({ enabled: false, hostNetwork: false });
    expect(config.images.tag).toBe('2026.08');
    expect(config.ingress.type).toBe('traefik');
    expect(config.monitoring).toBe(true);
    expect(config.timeouts.serverStartSeconds).toBe(36000);
    expect(config.images.pullPolicy).toBe('IfNotPresent');
    expect(config.hubApi.replicas).toBe(0);
    expect(config.timeouts.dbFinalizeSeconds).toBeGreaterThanOrEqual(3600);
    expect(plansOf(config)).toContain('install');
  });

  it('needs only an FQDN', () => {
    const config = parseConfig('fqdn: uyuni.example.org\n');
    expect(config.namespace).toBe('uyuni');
    expect(config.tls.mode).toBe('generated');
    expect(plansOf(config)).toEqual(['install']);
  });

  it('refuses an unknown key, naming it', () => {
    expect(withChanges({ images: { colour: 'blue' } })).toEqual(['images.colour: unknown setting']);
    expect(withChanges({ replicas: 3 })).toEqual(['replicas: unknown setting']);
  });

  it('refuses a wrong type, naming the field and the expected type', () => {
    expect(withChanges({ tftp: 'yes' })).toEqual(['tftp: must be a mapping of settings']);
    expect(withChanges({ tftp: { enabled: 'yes' } })).toEqual(['tftp.enabled: must be a boolean']);
    expect(withChanges({ hubApi: { replicas: 'two' } })).toEqual(['hubApi.replicas: must be a number']);
  });

  it('refuses an invalid FQDN', () => {
    for (const fqdn of ['uyuni', 'uyuni_server.example.com', 'uyuni.example.com;reboot', '-a.example.com', 'a..b']) {
      const p = withChanges({ fqdn });
      expect(p).toHaveLength(1);
      expect(p[0]).toMatch(/^fqdn: must be a fully qualified domain name/);
    }
  });

  it('refuses a namespace that is not a DNS-1123 label', () => {
    expect(withChanges({ namespace: 'Uyuni' })[0]).toMatch(/^namespace: must be a DNS-1123 label/);
    expect(withChanges({ namespace: 'a'.repeat(64) })[0]).toMatch(/^namespace: must be at most 63 characters/);
    expect(withChanges({ volumes: { storageClass: 'Fast SSD' } })[0]).toMatch(/^volumes.storageClass: must be a storage class name or "-"/);
  });

  it('refuses a bad quantity', () => {
    expect(withChanges({ volumes: { overrides: { 'var-pgsql18': { size: '50 GB' } } } })).toEqual(['volumes.overrides.var-pgsql18.size: must be a Kubernetes quantity such as 10Gi, 300Mi or 1Ti']);
    expect(withChanges({ volumes: { overrides: { 'var-log': { size: '-1Gi' } } } })[0]).toMatch(/^volumes.overrides.var-log.size: must be a Kubernetes quantity/);
  });

  it('refuses an unknown enum value, listing the allowed ones', () => {
    expect(withChanges({ images: { pullPolicy: 'Sometimes' } })).toEqual(['images.pullPolicy: must be one of "Always", "IfNotPresent", "Never"']);
    expect(withChanges({ tls: { mode: 'letsencrypt' } })).toEqual(['tls.mode: must be one of "generated", "third-party", "migrated"']);
    expect(withChanges({ services: { web: { type: 'ExternalName' } } })).toEqual(['services.web.type: must be one of "ClusterIP", "LoadBalancer", "NodePort"']);
  });

  it('refuses clashing node ports, naming both places', () => {
    const p = withChanges({
      services: {
        salt: { type: 'NodePort', nodePorts: { publish: 30505, request: 30506 } },
        cobbler: { type: 'NodePort', nodePorts: { cobbler: 30505 } },
      },
    });
    expect(p).toEqual(['services.cobbler.nodePorts.cobbler: node port 30505 is already used by services.salt.nodePorts.publish']);
  });

  it('refuses node ports outside the node port range, for unknown ports, or without NodePort', () => {
    expect(withChanges({ services: { salt: { type: 'NodePort', nodePorts: { publish: 80 } } } })).toEqual(['services.salt.nodePorts.publish: must be in the node port range 30000-32767']);
    expect(withChanges({ services: { salt: { type: 'NodePort', nodePorts: { http: 30080 } } } })).toEqual(['services.salt.nodePorts.http: salt has no port of that name (ports: publish, request)']);
    expect(withChanges({ services: { salt: { type: 'LoadBalancer', nodePorts: { publish: 30505 } } } })).toEqual(['services.salt.nodePorts: only allowed with type NodePort (type is LoadBalancer)']);
  });

  it('refuses exposure of a Service the configuration does not have', () => {
    expect(withChanges({ services: { search: { type: 'LoadBalancer' } } })).toEqual([
      'services.search: Service search is not part of this configuration (it depends on tftp, debugJava, monitoring or hubApi)']);
    expect(withChanges({ services: { tftp: { type: 'LoadBalancer' } } })[0]).toMatch(/^services.tftp: Service tftp is not part of this configuration/);
    expect(withChanges({ services: { mail: { type: 'LoadBalancer' } } })[0]).toMatch(/^services.mail: no such Service \(known: cobbler, db, /);
    expect(withChanges({ tftp: { enabled: true }, services: { tftp: { type: 'NodePort' } } })).toEqual([
      'services.tftp: tftp is always a LoadBalancer Service (use tftp.hostNetwork to do without it)']);
  });

  it('refuses an override of a volume that does not exist', () => {
    expect(withChanges({ volumes: { overrides: { 'var-pgsql2': { size: '1Gi' } } } })[0]).toMatch(/^volumes.overrides.var-pgsql2: no such claim; did you mean var-pgsql\? \(known: var-cobbler, /);
    expect(withChanges({ volumes: { overrides: { 'scratch': { size: '1Gi' } } } })[0]).toMatch(/^volumes.overrides.scratch: no such claim \(known: var-cobbler, /);
  });

  it('refuses a timezone that is not a tz name and a country code that is not two letters', () => {
    expect(withChanges({ timezone: 'Europe/Berlin; rm -rf /' })[0]).toMatch(/^timezone: must be a tz database name/);
    expect(withChanges({ tls: { ca: { country: 'Germany' } } })[0]).toMatch(/^tls.ca.country: must be a two-letter country code/);
  });

  it('refuses a plan the configuration has no section for', () => {
    expect(withChanges({ plans: ['install', 'proxy'] })).toEqual(['plans[1]: proxy needs a proxy section']);
    expect(withChanges({ plans: ['deploy'] })[0]).toMatch(/^plans\[0\]: must be one of "install", "migrate"/);
  });

  it('reports every problem at once', () => {
    expect(withChanges({ tftp: 'yes', namespace: 'UY', images: { pullPolicy: 'x' } })).toHaveLength(3);
  });

  it('reports the schema\'s problems and the cross checks\' in one round', () => {
    // A bad size and an unknown claim of the same map: both.
    expect(withChanges({ volumes: { overrides: { 'var-pgsql18': { size: '50 GB' }, 'var-pgsql2': { size: '1Gi' } } } })).toEqual([
      'volumes.overrides.var-pgsql18.size: must be a Kubernetes quantity such as 10Gi, 300Mi or 1Ti',
      expect.stringMatching(/^volumes\.overrides\.var-pgsql2: no such claim; did you mean var-pgsql\? \(known: var-cobbler, /),
    ]);
    // A section the schema refuses hides no rule of other sections.
    const salt = { type: 'LoadBalancer' };
    expect(withChanges({ timezone: 3, services: { salt }, ingress: { type: 'none', className: 'nginx' }, server: { mirror: { claimName: 'm', hostPath: '/srv/m' } } })).toEqual([
      'timezone: must be a string: YAML reads 3 as a number; quote it: timezone: "3"', 'ingress.className: there is no Ingress with ingress.type none', 'server.mirror: set exactly one of claimName and hostPath']);
    // A rule across sections runs only when all of them are valid: a wrong type in one is not judged further.
    expect(withChanges({ hubApi: { replicas: 'two' }, services: { salt, 'hub-api': { type: 'LoadBalancer' } }, ingress: { className: 'x', type: 'none' } })).toEqual([
      'hubApi.replicas: must be a number', 'ingress.className: there is no Ingress with ingress.type none']);
  });

  it('suggests the key meant for an unknown one, at any depth, by edit distance and case', () => {
    expect(problems('fdqn: uyuni.example.com\n')).toEqual(['fqdn: is required', 'fdqn: unknown setting; did you mean fqdn?']);
    expect(withChanges({ volumes: { storageclass: 'fast' } })).toEqual(['volumes.storageclass: unknown setting; did you mean volumes.storageClass?']);
    expect(withChanges({ services: { web: { tpye: 'NodePort' } } })).toEqual(['services.web.tpye: unknown setting; did you mean services.web.type?']);
    expect(withChanges({ nodeServices: { pods: [{ name: 'p', nodeName: 'n', containers: [{ name: 'c', image: 'i:1', comand: [] }] }] } })).toEqual([
      'nodeServices.pods[0].containers[0].comand: unknown setting; did you mean nodeServices.pods[0].containers[0].command?']);
    expect(withChanges({ images: { pullpolicy: 'Always' } })).toEqual(['images.pullpolicy: unknown setting; did you mean images.pullPolicy?']);
    // Nothing close: no guess.
    expect(withChanges({ images: { colour: 'blue' } })).toEqual(['images.colour: unknown setting']);
  });

  it('suggests the value meant for an unknown one of a fixed list, and the Service meant', () => {
    expect(withChanges({ tls: { mode: 'Generated' } })).toEqual(['tls.mode: must be one of "generated", "third-party", "migrated"; did you mean "generated"?']);
    expect(withChanges({ plans: ['instal'] })).toEqual([expect.stringMatching(/^plans\[0\]: must be one of "install", .*; did you mean "install"\?$/)]);
    expect(withChanges({ services: { wbe: { type: 'LoadBalancer' } } })).toEqual([expect.stringMatching(/^services\.wbe: no such Service; did you mean web\? \(known: /)]);
  });

  it('says to quote a tag YAML reads as a number, showing it as written', () => {
    expect(problems('fqdn: uyuni.example.com\nimages:\n  tag: 2026.10\n')).toEqual([
      'images.tag: must be a string: YAML reads 2026.10 as the number 2026.1; quote it: tag: "2026.10"']);
    expect(problems('fqdn: uyuni.example.com\nimages:\n  tag: 2026.08\n')).toEqual([
      'images.tag: must be a string: YAML reads 2026.08 as a number; quote it: tag: "2026.08"']);
    expect(problems('fqdn: uyuni.example.com\nimages:\n  components:\n    server: {tag: 5.1}\n')).toEqual([
      'images.components.server.tag: must be a string: YAML reads 5.1 as a number; quote it: tag: "5.1"']);
    expect(problems('fqdn: uyuni.example.com\nproxy:\n  fqdn: p.example.com\n  dnsConfig:\n    searches: [a, 0x10]\n')).toEqual([
      'proxy.dnsConfig.searches[1]: must be a string: YAML reads 0x10 as the number 16; quote it: - "0x10"']);
    expect(problems('fqdn: uyuni.example.com\ntimezone: true\n')).toEqual(['timezone: must be a string: YAML reads true as a boolean; quote it: timezone: "true"']);
    // A value that is no scalar gets no hint.
    expect(problems('fqdn: uyuni.example.com\nimages:\n  tag: [a]\n')).toEqual(['images.tag: must be a string']);
  });

  it('refuses YAML that does not parse, or is not a mapping, or repeats a key', () => {
    expect(problems('fqdn: [unclosed\n')[0]).toMatch(/^not valid YAML: /);
    expect(problems('- a\n- b\n')).toEqual(['the document must be a mapping of settings (see docs/configuration.md)']);
    expect(problems('fqdn: a.example.com\nfqdn: b.example.com\n')).toEqual([
      'not valid YAML: duplicate key fqdn at line 2, column 1 (map keys must be unique)']);
    expect(problems('fqdn: a.example.com\ntls:\n  mode: generated\n  "mode": migrated\n')).toEqual([
      'not valid YAML: duplicate key "mode" at line 4, column 3 (map keys must be unique)']);
    expect(problems('fqdn: [unclosed\n')[0]).toMatch(/^not valid YAML: .* at line 2, column 1$/);
    expect(problems('namespace: uyuni\n')).toEqual(['fqdn: is required']);
  });

  it('names the file in the error message', () => {
    expect(() => parseConfig('debugJava: 1\nfqdn: a.example.com\n', 'my.yaml')).toThrow(/^my.yaml: invalid configuration\n  - debugJava: must be a boolean \(my.yaml, line 1, column 1\)$/);
  });

  it('says what replaced a setting of the earlier image generation', () => {
    expect(withChanges({ db: { separate: true } })).toEqual(['db.separate: removed: PostgreSQL always runs in Deployment db (an external database is not supported)']);
    expect(withChanges({ volumes: { database: { size: '50Gi' } } })).toEqual(['volumes.database: removed: use volumes.overrides.var-pgsql18']);
    expect(withChanges({ volumes: { mirror: 'mirror' } })).toEqual(['volumes.mirror: removed: use server.mirror.claimName']);
    expect(withChanges({ timeouts: { setupSeconds: 60 } })[0]).toMatch(/^timeouts.setupSeconds: removed: the server sets itself up at its first start/);
  });

  it('refuses a server start timeout shorter than the startup probe allows', () => {
    expect(withChanges({ timeouts: { serverStartSeconds: 1800 } })).toEqual([
      'timeouts.serverStartSeconds: must be at least 36000 (10 h): the server\'s startup probe allows its first start that long']);
  });

  it('refuses salt on a ClusterIP Service when no Traefik routes it', () => {
    expect(withChanges({ ingress: { type: 'nginx' } })[0]).toMatch(/^services.salt.type: must be LoadBalancer or NodePort with ingress.type nginx/);
    expect(parseConfig(defaultConfigWith({ ingress: { type: 'none' }, services: { salt: { type: 'LoadBalancer' } } })).ingress.type).toBe('none');
  });

  it('refuses contradicting server options, naming them', () => {
    expect(withChanges({ server: { superPrivileged: true, selinuxType: 'uyuni_container_t' } })[0]).toMatch(/^server.superPrivileged: cannot be combined/);
    expect(withChanges({ server: { mirror: { claimName: 'm', hostPath: '/srv/mirror' } } })).toEqual(['server.mirror: set exactly one of claimName and hostPath']);
    expect(withChanges({ server: { extraVolumeMounts: [{ name: 'extra', mountPath: '/extra' }] } })).toEqual([
      'server.extraVolumeMounts[0].name: no volume extra (add it to server.extraVolumes)']);
    expect(withChanges({ server: { extraVolumes: [{ name: 'etc-rhn', emptyDir: {} }] } })).toEqual([
      'server.extraVolumes[0].name: etc-rhn is a volume of the server pod already']);
  });

  it('refuses a PostgreSQL version the images cannot upgrade from or to', () => {
    expect(withChanges({ upgrade: { postgresql: { from: 15 } } })).toEqual(['upgrade.postgresql.from: must be the PostgreSQL major version of the running database: 14, 16, 18']);
    expect(withChanges({ upgrade: { postgresql: { from: 16, to: 17 } } })).toEqual(['upgrade.postgresql.to: must be the PostgreSQL of the current server-postgresql image: 18']);
  });

  it('refuses an FQDN with upper-case letters', () => {
    expect(withChanges({ fqdn: 'Uyuni.example.com' })).toEqual(['fqdn: must be lower-case (Kubernetes host names are): uyuni.example.com']);
    expect(withChanges({ proxy: { fqdn: 'PROXY.example.com' } })).toEqual(['proxy.fqdn: must be lower-case (Kubernetes host names are): proxy.example.com']);
    expect(withChanges({ migration: { source: { fqdn: 'Old.example.com' }, postgresql: { from: 16 } } })).toEqual([
      'migration.source.fqdn: must be lower-case (Kubernetes host names are): old.example.com']);
  });

  it('refuses the proxy in the server\'s namespace when both plans are written', () => {
    expect(withChanges({ proxy: { fqdn: 'proxy.example.com', namespace: 'uyuni' } })).toEqual([
      'proxy.namespace: must not be the server\'s namespace uyuni when a server plan and the proxy plan are written (both define Services web, salt and tftp there)']);
    // The proxy plan alone: its namespace is in another cluster than the server's.
    expect(parseConfig(defaultConfigWith({ plans: ['proxy'], proxy: { fqdn: 'proxy.example.com', namespace: 'uyuni' } })).proxy!.namespace).toBe('uyuni');
    expect(withChanges({ proxy: { fqdn: 'proxy.example.com', namespace: 'uyuni', tls: { issuer: true } } })).toEqual([
      'proxy.namespace: must not be the server\'s namespace uyuni with proxy.tls.issuer (the proxy\'s Services web and salt would replace the server\'s)']);
  });

  it('refuses YAML aliases beyond the budget, naming the line', () => {
    const laughs = ['fqdn: uyuni.example.com', 'a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]'];
    for (let i = 1; i < 9; i++) laughs.push(`a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(', ')}]`);
    const p = problems(laughs.join('\n'));
    expect(p).toHaveLength(1);
    expect(p[0]).toMatch(/^YAML aliases expand to more than 64 nodes at the alias \*a\d at line \d+, column \d+ \(the bound of a configuration\)$/);
    expect(problems('fqdn: a.example.com\nx: &x [*x]\n')[0]).toMatch(/^YAML aliases expand to more than 64 nodes at the alias \*x at line 2/);
    expect(problems('fqdn: a.example.com\nx: *nope\n')).toEqual(['not valid YAML: the alias *nope at line 2, column 4 has no anchor &nope before it']);
    // A few aliases are fine: a shared container of node pods.
    const pods = [
      'fqdn: uyuni.example.com', 'nodeServices:', '  pods:',
      '    - {name: a, namespace: x, nodeName: n1, containers: &c [{name: c, image: "c:1", command: [/bin/true]}]}',
      '    - {name: b, namespace: x, nodeName: n1, containers: *c}',
    ];
    expect(parseConfig(pods.join('\n')).nodeServices!.pods[1].containers[0].image).toBe('c:1');
  });

  it('refuses nesting deeper than 64 levels, naming the line, and without running out of stack', () => {
    expect(problems(`fqdn: a.example.com\nx: ${'['.repeat(100_000)}${']'.repeat(100_000)}\n`)[0]).toMatch(/^nested deeper than 64 levels at line 2, column \d+/);
    const block = Array.from({ length: 80 }, (_, i) => `${'  '.repeat(i)}k${i}:`).join('\n');
    expect(problems(`fqdn: a.example.com\n${block}\n`)[0]).toMatch(/^nested deeper than 64 levels at line 6\d, column \d+/);
    expect(problems(`fqdn: a.example.com\nx:\n  ${'- '.repeat(400_000)}a\n`)[0]).toMatch(/^nested deeper than 64 levels at line 3/);
    // 60 levels are only refused by the schema.
    expect(problems(`fqdn: a.example.com\nx: ${'['.repeat(60)}${']'.repeat(60)}\n`)).toEqual(['x: unknown setting']);
  });

  it('refuses text over 1 MiB before parsing it', () => {
    expect(problems(`fqdn: a.example.com\n#${'x'.repeat(1024 * 1024)}\n`)).toEqual(['is more than 1048576 bytes (1 MiB): a configuration may have at most that']);
  });
});
