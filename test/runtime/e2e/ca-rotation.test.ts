/**
 * A CA rotation in two phases through the runtime on the simulator (docs/ca-rotation.md): the
 * synthesized dist/install, dist/ssl-addca and dist/ssl-rotate (examples/ca-rotation.yaml, with a
 * proxy whose CA ConfigMap phase 2 checks). Phase 2 is refused before phase 1 and while the proxy
 * does not trust the new CA, writing nothing; it asks first; the server's recorded CA follows the
 * rotation, and an install that does not know it is refused.
 */
import { startSimulator, Simulator } from '../../sim';
import { changes, cli } from './harness';
import { dist, synthExample } from './migration';

let sim: Simulator;
afterEach(async () => {
  await sim?.stop();
});

const NS = 'uyuni';
const secretText = (name: string) => Buffer.from(sim.get('v1', 'Secret', name, NS).data['ca.crt'], 'base64').toString('utf8');
const server = () => sim.get('apps/v1', 'Deployment', 'uyuni', NS).spec.template.spec;
const annotation = (deployment: string) => sim.get('apps/v1', 'Deployment', deployment, NS).spec.template.metadata.annotations?.['uyuni-cdk.io/ca-rotation'];
const issuerOf = (cert: string) => sim.get('cert-manager.io/v1', 'Certificate', cert, NS).spec.issuerRef.name;
const recordedIdentity = () => JSON.parse(sim.get('v1', 'ConfigMap', 'uyuni-cdk-history', NS).data.identity);
const proxyCa = (pem: string) => sim.put({
  apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'uyuni-ca', namespace: 'uyuni-proxy' }, data: { 'ca.crt': pem },
});

describe('a CA rotation in two phases', () => {
  it('refuses phase 2 before phase 1 and while the proxy lacks the new CA (writing nothing), then switches; install after it is refused', async () => {
    sim = await startSimulator();
    const k = { kubeconfig: sim.kubeconfigPath };
    expect((await cli('run', dist('install'), k)).code).toBe(0);
    const oldCa = secretText('uyuni-ca');

    // phase 2 first: refused before any write, naming phase 1
    let mark = sim.requests.length;
    const early = await cli('run', dist('ssl-rotate'), { ...k, yes: true });
    expect(early.code).toBe(1);
    expect(early.err).toContain('CA rotation phase 2: the new CA\'s Secret uyuni/uyuni-ca-next has no certificate (ca.crt, tls.crt): run dist/ssl-addca first');
    expect(early.err).toContain('refused (caRotation.force allows it)');
    expect(changes(sim.requests.slice(mark))).toEqual([]);
    expect(issuerOf('uyuni-cert')).toBe('uyuni-issuer');

    // the install of the rotation's configuration carries phase 2: refused as well
    const rotatedInstall = synthExample('ca-rotation.yaml', (c) => { c.plans = ['install']; }).install;
    const installEarly = await cli('run', rotatedInstall, { ...k, yes: true });
    expect(installEarly.code).toBe(1);
    expect(installEarly.err).toContain('run dist/ssl-addca first');

    // phase 1: the new CA beside the old one; the certificates stay
    const added = await cli('run', dist('ssl-addca'), k);
    expect(added.err).toBe('');
    expect(added.code).toBe(0);
    expect(issuerOf('uyuni-cert')).toBe('uyuni-issuer');
    expect(issuerOf('db-cert')).toBe('uyuni-issuer');
    expect(server().initContainers.map((c: any) => c.name)).toEqual(['init-volumes', 'db-waiter', 'ca-bundle']);
    const pub = server().containers[0].volumeMounts.find((m: any) => m.mountPath === '/srv/www/htdocs/pub/RHN-ORG-TRUSTED-SSL-CERT');
    expect(pub).toMatchObject({ name: 'ca-bundle', subPath: 'ca.crt' });
    expect(annotation('uyuni')).toBe('addca uyuni-ca-next');
    const newCa = secretText('uyuni-ca-next');
    expect(recordedIdentity().value?.caRotation ?? recordedIdentity().caRotation).toMatchObject({ phase: 'added', caSecret: 'uyuni-ca-next', plan: 'ssl-addca' });

    // the proxy's CA: missing, then the old CA only: refused, naming it
    mark = sim.requests.length;
    const noProxy = await cli('run', dist('ssl-rotate'), { ...k, yes: true });
    expect(noProxy.code).toBe(1);
    expect(noProxy.err).toContain('not trusting the new CA yet: the proxy proxy.example.com\'s CA (ConfigMap uyuni-proxy/uyuni-ca ca.crt: not found)');
    expect(changes(sim.requests.slice(mark))).toEqual([]);
    proxyCa(oldCa);
    const oldOnly = await cli('plan', dist('ssl-rotate'), k);
    expect(oldOnly.out).toContain('ConfigMap uyuni-proxy/uyuni-ca ca.crt: 1 certificate(s), none the new CA');

    // the proxy has the bundle: phase 2 is a destructive change that asks
    proxyCa(`${oldCa}${newCa}`);
    mark = sim.requests.length;
    const unasked = await cli('run', dist('ssl-rotate'), k);
    expect(unasked.code).not.toBe(0);
    expect(unasked.err + unasked.out).toContain('CA rotation phase 2: the server\'s certificates are issued from the new CA');
    expect(changes(sim.requests.slice(mark))).toEqual([]);
    const rotated = await cli('run', dist('ssl-rotate'), { ...k, yes: true });
    expect(rotated.err).toBe('');
    expect(rotated.code).toBe(0);
    expect(issuerOf('uyuni-cert')).toBe('uyuni-issuer-next');
    expect(issuerOf('db-cert')).toBe('uyuni-issuer-next');
    expect(sim.get('v1', 'Secret', 'uyuni-cert', NS).metadata.annotations['cert-manager.io/issuer-name']).toBe('uyuni-issuer-next');
    expect(server().initContainers.map((c: any) => c.name)).toEqual(['init-volumes', 'db-waiter']);
    expect(annotation('uyuni')).toBe('rotate uyuni-ca-next');
    expect(annotation('db')).toBe('rotate uyuni-ca-next');
    const id = recordedIdentity().value ?? recordedIdentity();
    expect(id.caRotation).toMatchObject({ phase: 'rotated', plan: 'ssl-rotate', from: id.caRotation.from });
    expect(id.caFingerprint).toBe(id.caRotation.caFingerprint);
    expect(id.caRotation.from).not.toBe(id.caFingerprint);

    // a second run converges: nothing to ask
    const again = await cli('run', dist('ssl-rotate'), k);
    expect(again.err).toBe('');
    expect(again.code).toBe(0);

    // an install that does not know the rotation would go back to the old CA: refused
    mark = sim.requests.length;
    const back = await cli('run', dist('install'), { ...k, yes: true });
    expect(back.code).toBe(1);
    expect(back.err).toContain('the CA that plan ssl-rotate rotated to');
    expect(back.err).toContain('refused (--allow-new-ca allows it)');
    expect(changes(sim.requests.slice(mark))).toEqual([]);
    // the install of the rotation's configuration keeps the new CA, and asks nothing
    const kept = await cli('run', rotatedInstall, k);
    expect(kept.err).toBe('');
    expect(kept.code).toBe(0);
    expect(issuerOf('uyuni-cert')).toBe('uyuni-issuer-next');
  });

  it('an emergency rotation needs no phase 1: it makes the new CA and switches at once, after a loud question', async () => {
    sim = await startSimulator();
    const k = { kubeconfig: sim.kubeconfigPath };
    expect((await cli('run', dist('install'), k)).code).toBe(0);
    const emergency = synthExample('ca-rotation.yaml', (c) => { c.caRotation.emergency = true; c.plans = ['ssl-rotate']; });
    expect(Object.keys(emergency).sort()).toEqual(['ssl-rotate']);
    const plan = await cli('plan', emergency['ssl-rotate'], k);
    expect(plan.out).toContain('caRotation.emergency  EMERGENCY CA ROTATION, no overlap');
    const unasked = await cli('run', emergency['ssl-rotate'], k);
    expect(unasked.code).not.toBe(0);
    expect(sim.get('cert-manager.io/v1', 'Certificate', 'uyuni-ca-next', NS)).toBeUndefined();
    const r = await cli('run', emergency['ssl-rotate'], { ...k, yes: true });
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(issuerOf('uyuni-cert')).toBe('uyuni-issuer-next');
    const id = recordedIdentity().value ?? recordedIdentity();
    expect(id.caRotation).toMatchObject({ phase: 'rotated', emergency: true });
  });

  it('a CA changed by hand is refused (--allow-new-ca allows it)', async () => {
    sim = await startSimulator();
    const k = { kubeconfig: sim.kubeconfigPath };
    expect((await cli('run', dist('install'), k)).code).toBe(0);
    const ca = sim.get('v1', 'Secret', 'uyuni-ca', NS);
    sim.put({ ...ca, data: { ...ca.data, 'ca.crt': Buffer.from('-----BEGIN CERTIFICATE-----\nb3RoZXI=\n-----END CERTIFICATE-----\n').toString('base64') } });
    const r = await cli('run', dist('install'), { ...k, yes: true });
    expect(r.code).toBe(1);
    expect(r.err).toContain('the server\'s CA would change from sha256:');
    expect((await cli('run', dist('install'), { ...k, yes: true, allowNewCa: true })).code).toBe(0);
  });
});
