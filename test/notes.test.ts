/**
 * The post-install notes synth writes into uyuni.plan (src/plans/notes.ts): the URL, the admin's
 * Secret, DNS and the ports clients must reach, following the configuration and the port table.
 */
import * as fs from 'fs';
import * as path from 'path';
import { CREDENTIALS } from '../src/model/credentials';
import type { PlanNotes } from '../src/plan/types';
import { defaultConfigWith, ROOT, synthYaml } from './helpers/synth';

const notesOf = (changes: Record<string, unknown> = {}): PlanNotes => synthYaml(defaultConfigWith(changes)).install.plan.notes!;
const portsOf = (n: PlanNotes) => n.ports.map((p) => `${p.port}/${p.protocol} ${p.what}: ${p.via}`);

describe('post-install notes in uyuni.plan', () => {
  it('install, behind Traefik: the URL, the admin Secret, the fqdn to the ingress controller, web and salt through it', () => {
    const n = notesOf({ fqdn: 'uyuni.corp.test' });
    expect(n.url).toBe('https://uyuni.corp.test/');
    expect(n.admin).toEqual({ secret: CREDENTIALS.admin.secret, usernameKey: 'username', passwordKey: 'password' });
    expect(n.adminFrom).toBeUndefined();
    expect(n.dns).toEqual([{ name: 'uyuni.corp.test', pointTo: 'the address of the ingress controller (ingress class traefik)' }]);
    expect(portsOf(n)).toEqual([
      '80/TCP web UI and clients\' repositories (HTTP): the ingress controller (ingress class traefik)',
      '443/TCP web UI and API (HTTPS): the ingress controller (ingress class traefik)',
      '4505/TCP salt publish: the ingress controller (Traefik entry point salt-publish, IngressRouteTCP)',
      '4506/TCP salt request: the ingress controller (Traefik entry point salt-request, IngressRouteTCP)',
    ]);
  });

  it('salt as a LoadBalancer, nginx, TFTP in its own Service: where each arrives, and the fqdn on those addresses too', () => {
    const n = notesOf({ ingress: { type: 'nginx' }, services: { salt: { type: 'LoadBalancer' } }, tftp: { enabled: true } });
    expect(portsOf(n)).toEqual([
      '80/TCP web UI and clients\' repositories (HTTP): the ingress controller (ingress class nginx)',
      '443/TCP web UI and API (HTTPS): the ingress controller (ingress class nginx)',
      '4505/TCP salt publish: Service salt (LoadBalancer)',
      '4506/TCP salt request: Service salt (LoadBalancer)',
      '69/UDP TFTP (network boot): Service tftp (LoadBalancer)',
    ]);
    expect(n.dns.map((d) => d.pointTo)).toEqual([
      'the address of the ingress controller (ingress class nginx)',
      expect.stringMatching(/^also the address of Service salt \(LoadBalancer\): give it the same address/),
      expect.stringMatching(/^also the address of Service tftp \(LoadBalancer\)/),
    ]);
  });

  it('salt on node ports: the node ports given, else the table\'s', () => {
    const n = notesOf({ services: { salt: { type: 'NodePort', nodePorts: { publish: 31505 } } } });
    expect(portsOf(n).filter((p) => p.includes('salt'))).toEqual([
      '4505/TCP salt publish: Service salt (NodePort 31505, on every node)',
      '4506/TCP salt request: Service salt (NodePort 30006, on every node)',
    ]);
  });

  it('TFTP in the node\'s network: 69/UDP on the node', () => {
    expect(portsOf(notesOf({ tftp: { enabled: true, hostNetwork: true } })).at(-1)).toBe('69/UDP TFTP (network boot): the node the tftp pod runs on (tftp.hostNetwork)');
  });

  it('migrate: the old server\'s users stay; the same DNS and ports', () => {
    const plans = synthYaml(fs.readFileSync(path.join(ROOT, 'examples/migration.yaml'), 'utf8'));
    const n = plans.migrate.plan.notes!;
    expect(n.admin).toBeUndefined();
    expect(n.adminFrom).toBe('old-server.example.com');
    expect(n.ports.map((p) => `${p.port}/${p.protocol}`)).toEqual(['80/TCP', '443/TCP', '4505/TCP', '4506/TCP', '69/UDP']);
    // a pre-sync brings up no server: no notes
    expect(plans['migrate-prepare']?.plan.notes).toBeUndefined();
  });
});
