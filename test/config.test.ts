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
    expect(config.tftp).toBe(true);
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
    expect(withChanges({ tftp: 'yes' })).toEqual(['tftp: must be a boolean']);
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
    expect(withChanges({ volumes: { storageClass: 'Fast SSD' } })[0]).toMatch(/^volumes.storageClass: must be a DNS-1123 subdomain/);
  });

  it('refuses a bad quantity', () => {
    expect(withChanges({ volumes: { database: { size: '50 GB' } } })).toEqual(['volumes.database.size: must be a Kubernetes quantity such as 10Gi, 300Mi or 1Ti']);
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
    expect(withChanges({ services: { search: { type: 'LoadBalancer' } } })[0]).toMatch(/^services.search: no such Service with this configuration \(known: /);
    expect(withChanges({ tftp: false })[0]).toMatch(/^services.tftp: no such Service/);
  });

  it('refuses an override of a volume that does not exist', () => {
    expect(withChanges({ volumes: { overrides: { 'var-pgsql2': { size: '1Gi' } } } })[0]).toMatch(/^volumes.overrides.var-pgsql2: no such volume/);
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

  it('refuses YAML that does not parse, or is not a mapping, or repeats a key', () => {
    expect(problems('fqdn: [unclosed\n')[0]).toMatch(/^not valid YAML: /);
    expect(problems('- a\n- b\n')).toEqual(['the document must be a mapping of settings (see docs/configuration.md)']);
    expect(problems('fqdn: a.example.com\nfqdn: b.example.com\n')[0]).toMatch(/^not valid YAML: .*(unique|Map keys)/i);
    expect(problems('namespace: uyuni\n')).toEqual(['fqdn: is required']);
  });

  it('names the file in the error message', () => {
    expect(() => parseConfig('tftp: 1\nfqdn: a.example.com\n', 'my.yaml')).toThrow(/^my.yaml: invalid configuration\n  - tftp: must be a boolean$/);
  });
});
