/**
 * The CA rotation plans as synthesized (src/plans/ca-rotation.ts; docs/ca-rotation.md): the
 * configuration's errors, what dist/ssl-addca and dist/ssl-rotate hold beside the install's
 * objects, and the trust bundle of init container ca-bundle with real certificates (openssl).
 */
import { execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { ConfigError, parseConfig, plansOf } from '../src/config/load';
import { defaultConfigWith, podSpec, synthYaml, tempDir } from './helpers/synth';
import { runScript } from './helpers/script-run';

const ROTATION_PLANS = ['install', 'ssl-addca', 'ssl-rotate'];
const config = (caRotation: Record<string, unknown>, more: Record<string, unknown> = {}) =>
  defaultConfigWith({ caRotation, plans: ROTATION_PLANS, nodeServices: undefined, ...more });

function problems(yaml: string): readonly string[] {
  try {
    parseConfig(yaml, 'bad.yaml');
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  return [];
}

describe('caRotation configuration', () => {
  it('writes both phases, or phase 2 alone in an emergency', () => {
    const plans = (r: Record<string, unknown>) => plansOf(parseConfig(defaultConfigWith({ caRotation: r, nodeServices: undefined }), 'c.yaml'));
    expect(plans({})).toEqual(['install', 'ssl-addca', 'ssl-rotate']);
    expect(plans({ emergency: true })).toEqual(['install', 'ssl-rotate']);
  });

  it.each([
    [{ caRotation: { ca: 'secret' } }, 'caRotation.secret: needed with caRotation.ca secret (the Secret that holds the new CA)'],
    [{ caRotation: { secret: 'my-ca' } }, 'caRotation.secret: only with caRotation.ca secret (a generated CA is made by cert-manager)'],
    [{ caRotation: {}, tls: { mode: 'third-party' } }, 'caRotation.ca: must be secret with tls.mode third-party (no cert-manager issues the certificates: name the new CA\'s Secret)'],
    [{ caRotation: { ca: 'secret', secret: 'my-ca', emergency: true }, tls: { mode: 'third-party' }, plans: ['ssl-rotate'] },
      'caRotation.emergency: not with tls.mode third-party (the new certificates are yours to put into Secrets uyuni-cert and db-cert; run dist/ssl-rotate/ after that)'],
    [{ caRotation: { emergency: true }, plans: ['ssl-addca', 'ssl-rotate'] }, 'plans[0]: ssl-addca has no place with caRotation.emergency (dist/ssl-rotate/ makes the new CA and switches at once)'],
    [{ caRotation: { ca: 'new' } }, 'caRotation.ca: must be one of "generated", "secret"'],
    [{ caRotation: undefined, plans: ['ssl-rotate'] }, 'plans[0]: ssl-rotate needs a caRotation section'],
    [{ caRotation: {}, upgrade: { postgresql: { from: 18 }, ca: 'new' } }, 'upgrade.ca: must be keep with caRotation (the rotation replaces the CA, with an overlap)'],
    [{ caRotation: {}, migration: { source: { fqdn: 'old.example.com' }, postgresql: { from: 16 } } }, 'caRotation: not with migration'],
  ])('%j', (change, message) => {
    const found = problems(defaultConfigWith({ nodeServices: undefined, ...change }));
    expect(found.some((p) => p.startsWith(message))).toBe(true);
  });
});

/** A Deployment's pod spec without what a CA rotation changes. */
function withoutTrust(o: any): any {
  const spec = JSON.parse(JSON.stringify(o.spec));
  const pod = spec.template.spec;
  delete spec.template.metadata.annotations;
  pod.initContainers = pod.initContainers.filter((c: any) => c.name !== 'ca-bundle');
  pod.volumes = pod.volumes.filter((v: any) => !['ca-bundle', 'ca-next'].includes(v.name));
  pod.containers[0].volumeMounts = pod.containers[0].volumeMounts.map((m: any) => (m.name === 'ca-bundle' ? { ...m, name: m.subPath === 'db-ca.crt' ? 'db-ca-cert' : 'ca-cert', subPath: 'ca.crt' } : m));
  return spec;
}
const stripped = (o: any) => ({ ...o, metadata: { ...o.metadata, labels: undefined, annotations: undefined } });

describe('dist/ssl-addca and dist/ssl-rotate (cert-manager)', () => {
  const r = synthYaml(config({}));
  // the server before the rotation: the same configuration without caRotation
  const install = synthYaml(defaultConfigWith({ nodeServices: undefined, plans: ['install'] })).install;
  const addca = r['ssl-addca'];
  const rotate = r['ssl-rotate'];

  it('phase 1: a new self-signed root and its Issuer; the server publishes and trusts both CAs; no certificate changes', () => {
    expect(addca.plan.steps.map((s) => s.name)).toEqual(['ca-next', 'server']);
    expect(addca.plan.caRotation).toEqual({ phase: 'addca', caSecret: 'uyuni-ca-next' });
    expect(addca.plan.identity).toEqual(install.plan.identity);
    const ca = addca.find('Certificate', 'uyuni-ca-next');
    expect(ca.spec).toMatchObject({ isCA: true, secretName: 'uyuni-ca-next', issuerRef: { name: 'uyuni-next-root-issuer' }, privateKey: { rotationPolicy: 'Never' } });
    expect(addca.find('Issuer', 'uyuni-next-root-issuer').spec).toEqual({ selfSigned: {} });
    expect(addca.find('Issuer', 'uyuni-issuer-next').spec).toEqual({ ca: { secretName: 'uyuni-ca-next' } });
    expect(addca.objects.filter((o) => o.kind === 'Certificate').map((o) => o.metadata.name)).toEqual(['uyuni-ca-next']);

    const pod = podSpec(addca.find('Deployment', 'uyuni'));
    const bundle = pod.initContainers.find((c: any) => c.name === 'ca-bundle');
    expect(bundle.volumeMounts.map((m: any) => [m.name, m.mountPath])).toEqual([
      ['ca-bundle', '/ca/bundle'], ['ca-cert', '/ca/current'], ['db-ca-cert', '/ca/db'], ['ca-next', '/ca/next'],
    ]);
    expect(pod.volumes.find((v: any) => v.name === 'ca-next').secret).toMatchObject({ secretName: 'uyuni-ca-next', items: [{ key: 'ca.crt', path: 'ca.crt' }] });
    const mounts = Object.fromEntries(pod.containers[0].volumeMounts.filter((m: any) => m.name === 'ca-bundle').map((m: any) => [m.mountPath, m.subPath]));
    expect(mounts).toEqual({
      '/etc/pki/trust/anchors/LOCAL-RHN-ORG-TRUSTED-SSL-CERT': 'ca.crt',
      '/usr/share/susemanager/salt/certs/RHN-ORG-TRUSTED-SSL-CERT': 'ca.crt',
      '/srv/www/htdocs/pub/RHN-ORG-TRUSTED-SSL-CERT': 'ca.crt',
      '/etc/pki/trust/anchors/DB-RHN-ORG-TRUSTED-SSL-CERT': 'db-ca.crt',
    });
    // the serving certificate stays uyuni-cert's
    expect(pod.volumes.find((v: any) => v.name === 'tls').secret.secretName).toBe('uyuni-cert');
    // nothing else of the server differs from the install's (same step: pruning removes nothing of it)
    expect(withoutTrust(addca.find('Deployment', 'uyuni'))).toEqual(withoutTrust(install.find('Deployment', 'uyuni')));
    expect(addca.find('Deployment', 'uyuni').spec.template.metadata.annotations).toEqual({ 'uyuni-cdk.io/ca-rotation': 'addca uyuni-ca-next' });
    expect(addca.files['0001-server.k8s.yaml'].map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(install.files[install.step('server').file].map((o) => `${o.kind}/${o.metadata.name}`));
  });

  it('phase 2: the certificates name the new Issuer, the database and the server restart on them, the pub CA is uyuni-cert\'s again', () => {
    expect(rotate.plan.steps.map((s) => s.name)).toEqual(['ca-next', 'tls', 'database', 'server']);
    expect(rotate.plan.identity).toEqual({ ...install.plan.identity, caSecret: 'uyuni-ca-next' });
    expect(rotate.plan.caRotation).toEqual({ phase: 'rotate', caSecret: 'uyuni-ca-next' });
    for (const cert of ['uyuni-cert', 'db-cert']) expect(rotate.find('Certificate', cert).spec.issuerRef.name).toBe('uyuni-issuer-next');
    // the tls step is the install's, but for the leaves' issuer
    const issuerOff = (o: any) => (o.kind === 'Certificate' && o.spec.issuerRef.name === 'uyuni-issuer-next' ? { ...o, spec: { ...o.spec, issuerRef: { ...o.spec.issuerRef, name: 'uyuni-issuer' } } } : o);
    expect(rotate.files[rotate.step('tls').file].map(issuerOff).map(stripped)).toEqual(install.files[install.step('tls').file].map(stripped));
    for (const d of ['uyuni', 'db']) {
      expect(rotate.find('Deployment', d).spec.template.metadata.annotations).toMatchObject({ 'uyuni-cdk.io/ca-rotation': 'rotate uyuni-ca-next' });
      expect(withoutTrust(rotate.find('Deployment', d))).toEqual(withoutTrust(install.find('Deployment', d)));
    }
    expect(podSpec(rotate.find('Deployment', 'uyuni')).initContainers.map((c: any) => c.name)).toEqual(['init-volumes', 'db-waiter']);
  });

  it('the install of the configuration keeps the server on the rotated CA: phase 2\'s objects and checks, and the install\'s', () => {
    const rotatedInstall = r.install;
    expect(rotatedInstall.plan.steps.map((s) => s.name)).toEqual(['namespace', 'volumes', 'ca-next', 'tls', 'services', 'database', 'ingress', 'server']);
    expect(rotatedInstall.plan.caRotation).toEqual(rotate.plan.caRotation);
    expect(rotatedInstall.plan.identity).toEqual(rotate.plan.identity);
    expect(rotatedInstall.plan.notes).toEqual(install.plan.notes);
    for (const step of ['ca-next', 'tls', 'database', 'server']) {
      expect(rotatedInstall.files[rotatedInstall.step(step).file].map(stripped)).toEqual(rotate.files[rotate.step(step).file].map(stripped));
    }
    for (const step of ['namespace', 'volumes', 'services', 'ingress']) {
      expect(rotatedInstall.files[rotatedInstall.step(step).file].map(stripped)).toEqual(install.files[install.step(step).file].map(stripped));
    }
  });

  it('the upgrade of the configuration records the server on the rotated CA (its keep-tls step changes no certificate)', () => {
    const u = synthYaml(config({}, { plans: ['upgrade'], upgrade: { postgresql: { from: 18 } } })).upgrade;
    expect(u.plan.identity?.caSecret).toBe('uyuni-ca-next');
    expect(u.plan.caRotation).toBeUndefined();
  });

  it('with a proxy, phase 2 checks its CA ConfigMap; emergency and force are in the plan', () => {
    const p = synthYaml(config({ emergency: true, force: true }, { plans: ['ssl-rotate'], proxy: { namespace: 'uyuni-proxy', fqdn: 'proxy.example.com' } }))['ssl-rotate'];
    expect(p.plan.caRotation).toEqual({
      phase: 'rotate', caSecret: 'uyuni-ca-next', emergency: true, force: true,
      trustedBy: [{ kind: 'ConfigMap', name: 'uyuni-ca', namespace: 'uyuni-proxy', key: 'ca.crt', what: 'the proxy proxy.example.com\'s CA' }],
    });
    expect(p.plan.description).toContain('EMERGENCY');
  });
});

describe('a CA rotation with a given CA', () => {
  it('cert-manager issues from the given Secret: no new root, the Secret is required with its key', () => {
    const r = synthYaml(config({ ca: 'secret', secret: 'corp-ca' }));
    const addca = r['ssl-addca'];
    expect(addca.objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(expect.arrayContaining(['Issuer/uyuni-issuer-next']));
    expect(addca.objects.some((o) => o.kind === 'Certificate')).toBe(false);
    expect(addca.find('Issuer', 'uyuni-issuer-next').spec).toEqual({ ca: { secretName: 'corp-ca' } });
    expect(addca.step('ca-next').requires).toEqual([expect.objectContaining({ kind: 'Secret', name: 'corp-ca', keys: ['ca.crt', 'tls.crt', 'tls.key'], ifMissing: 'fail' })]);
    expect(r['ssl-rotate'].plan.identity?.caSecret).toBe('corp-ca');
  });

  it('third-party: no cert-manager object; phase 2 checks that uyuni-cert and db-cert hold the new CA', () => {
    const r = synthYaml(config({ ca: 'secret', secret: 'corp-ca' }, { tls: { mode: 'third-party' } }));
    expect(r['ssl-addca'].plan.steps.map((s) => s.name)).toEqual(['server']);
    expect(r['ssl-addca'].step('server').requires).toContainEqual(expect.objectContaining({ name: 'corp-ca', keys: ['ca.crt'] }));
    const rotate = r['ssl-rotate'];
    expect(rotate.plan.steps.map((s) => s.name)).toEqual(['database', 'server']);
    expect(rotate.plan.caRotation?.trustedBy?.map((t) => `${t.kind}/${t.name}`)).toEqual(['Secret/uyuni-cert', 'Secret/db-cert']);
  });
});

describe('init container ca-bundle with real certificates (openssl)', () => {
  const dir = tempDir('ca-bundle-');
  const f = (n: string) => path.join(dir, n);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  const verify = (ca: string, leaf: string) => spawnSync('openssl', ['verify', '-CAfile', ca, leaf], { encoding: 'utf8' }).status === 0;
  beforeAll(() => {
    for (const ca of ['old', 'new']) {
      openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${ca} CA`, '-days', '2', '-keyout', f(`${ca}-ca.key`), '-out', f(`${ca}-ca.crt`),
        '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
      openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=uyuni.example.com', '-keyout', f(`${ca}-leaf.key`), '-out', f(`${ca}-leaf.csr`));
      openssl('x509', '-req', '-in', f(`${ca}-leaf.csr`), '-CA', f(`${ca}-ca.crt`), '-CAkey', f(`${ca}-ca.key`), '-CAcreateserial', '-days', '1', '-out', f(`${ca}-leaf.crt`));
    }
    fs.mkdirSync(f('bundle'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('phase 1: the bundle holds both CAs, so the certificate of today and the one of phase 2 both verify; phase 2\'s CA alone refuses the old', async () => {
    const env = { BUNDLE_DIR: f('bundle'), CURRENT_CA: f('old-ca.crt'), CURRENT_DB_CA: f('old-ca.crt'), NEXT_CA: f('new-ca.crt') };
    const r = await runScript('ca-bundle.sh', env);
    expect(r.out).toContain('/ca.crt: 2 CA certificate(s)');
    expect(r.code).toBe(0);
    for (const b of ['ca.crt', 'db-ca.crt']) {
      const text = fs.readFileSync(path.join(f('bundle'), b), 'utf8');
      expect(text).toBe(fs.readFileSync(f('old-ca.crt'), 'utf8') + fs.readFileSync(f('new-ca.crt'), 'utf8'));
      expect(verify(path.join(f('bundle'), b), f('old-leaf.crt'))).toBe(true);
      expect(verify(path.join(f('bundle'), b), f('new-leaf.crt'))).toBe(true);
    }
    // after phase 2 the server publishes the new CA alone: the old CA's certificates no longer verify
    expect(verify(f('new-ca.crt'), f('new-leaf.crt'))).toBe(true);
    expect(verify(f('new-ca.crt'), f('old-leaf.crt'))).toBe(false);
  });

  it('adds a CA given twice once, and fails on a file without a certificate', async () => {
    const twice = await runScript('ca-bundle.sh', { BUNDLE_DIR: f('bundle'), CURRENT_CA: f('old-ca.crt'), CURRENT_DB_CA: f('old-ca.crt'), NEXT_CA: f('old-ca.crt') });
    expect(twice.code).toBe(0);
    expect(fs.readFileSync(path.join(f('bundle'), 'ca.crt'), 'utf8')).toBe(fs.readFileSync(f('old-ca.crt'), 'utf8'));
    fs.writeFileSync(f('empty.crt'), '');
    const bad = await runScript('ca-bundle.sh', { BUNDLE_DIR: f('bundle'), CURRENT_CA: f('old-ca.crt'), CURRENT_DB_CA: f('old-ca.crt'), NEXT_CA: f('empty.crt') });
    expect(bad.code).toBe(1);
    expect(bad.out).toContain(`ca-bundle: ${f('empty.crt')} holds no PEM certificate`);
  });
});
