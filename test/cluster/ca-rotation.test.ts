/**
 * A CA rotation against kube-apiserver (docs/ca-rotation.md): dist/install, then phase 1
 * (dist/ssl-addca) and phase 2 (dist/ssl-rotate) of a configuration synthesized for a namespace
 * of the suite's own, with a proxy namespace whose CA ConfigMap phase 2 checks. No cert-manager
 * controller runs here: the fake kubelet's FakeCertManager signs as cert-manager does (a
 * self-signed root signs itself, a CA Issuer signs with its Secret's key) and issues a
 * Certificate again when its issuerRef changes; openssl then checks whom the server's
 * certificate verifies against.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { cli } from '../runtime/e2e/harness';
import { defaultConfigWith, synthYaml, tempDir } from '../helpers/synth';
import { plane, runOwn, writes } from './helpers';
import { auditSize } from './plane/plane';

const p = plane();
const ns = p.namespace('carot');
const proxyNs = p.namespace('carot-proxy');
const plans = synthYaml(defaultConfigWith({
  namespace: ns, nodeServices: undefined, plans: ['install', 'ssl-addca', 'ssl-rotate'],
  proxy: { namespace: proxyNs, fqdn: 'proxy.example.com' }, caRotation: {},
}));
/** The server before the rotation: the same configuration without caRotation. */
const before = synthYaml(defaultConfigWith({ namespace: ns, nodeServices: undefined, plans: ['install'] })).install;
const k = { kubeconfig: p.kubeconfig };
const dir = tempDir('carot-certs-');

async function secret(name: string, key: string): Promise<string> {
  const s = JSON.parse((await p.kubectl(['-n', ns, 'get', 'secret', name, '-o', 'json'])).out);
  return Buffer.from(s.data[key], 'base64').toString('utf8');
}
/** Whether the PEM `leaf` verifies against the CA file `ca` (openssl verify). */
function verifies(ca: string, leaf: string): boolean {
  const caFile = path.join(dir, 'ca.pem');
  const leafFile = path.join(dir, 'leaf.pem');
  fs.writeFileSync(caFile, ca);
  fs.writeFileSync(leafFile, leaf);
  return spawnSync('openssl', ['verify', '-CAfile', caFile, leafFile], { encoding: 'utf8' }).status === 0;
}
const deployment = async (name: string) => JSON.parse((await p.kubectl(['-n', ns, 'get', 'deployment', name, '-o', 'json'])).out);

afterAll(async () => {
  await p.kubectl(['delete', 'namespace', ns, proxyNs, '--wait=false']);
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('a CA rotation in two phases against kube-apiserver', () => {
  let oldCa: string;
  let newCa: string;
  let servedBefore: string;

  it('installs, and refuses phase 2 before phase 1 with no write but the run\'s own', async () => {
    const install = await cli('run', before.dir, { ...k, yes: true });
    expect({ code: install.code, err: install.err }).toEqual({ code: 0, err: expect.any(String) });
    oldCa = await secret('uyuni-ca', 'tls.crt');
    servedBefore = await secret('uyuni-cert', 'tls.crt');
    expect(verifies(oldCa, servedBefore)).toBe(true);
    const mark = auditSize(p.dir);
    const early = await cli('run', plans['ssl-rotate'].dir, { ...k, yes: true });
    expect(early.code).toBe(1);
    expect(early.err).toContain('run dist/ssl-addca first');
    expect(writes(p, mark, ns).filter((w) => !runOwn(w))).toEqual([]);
  });

  it('phase 1: the new root and its Issuer, the server with both CAs; the served certificate is the same', async () => {
    const added = await cli('run', plans['ssl-addca'].dir, { ...k, yes: true });
    expect({ code: added.code, err: added.err }).toEqual({ code: 0, err: expect.any(String) });
    newCa = await secret('uyuni-ca-next', 'ca.crt');
    // a self-signed root of its own: not the old CA, and the old CA does not vouch for it
    expect(newCa).toBe(await secret('uyuni-ca-next', 'tls.crt'));
    expect(verifies(oldCa, newCa)).toBe(false);
    expect(await secret('uyuni-cert', 'tls.crt')).toBe(servedBefore);
    const pod = (await deployment('uyuni')).spec.template;
    expect(pod.metadata.annotations['uyuni-cdk.io/ca-rotation']).toBe('addca uyuni-ca-next');
    expect(pod.spec.initContainers.map((c: any) => c.name)).toEqual(['init-volumes', 'db-waiter', 'ca-bundle']);
    expect((await deployment('uyuni')).status.availableReplicas).toBe(1);
  });

  it('phase 2: refused while the proxy lacks the new CA; with it, the certificates come from the new CA and the old one no longer verifies them', async () => {
    expect((await p.kubectl(['create', 'namespace', proxyNs])).code).toBe(0);
    expect((await p.kubectl(['-n', proxyNs, 'create', 'configmap', 'uyuni-ca', `--from-literal=ca.crt=${oldCa}`])).code).toBe(0);
    const refused = await cli('run', plans['ssl-rotate'].dir, { ...k, yes: true });
    expect(refused.code).toBe(1);
    expect(refused.err).toContain(`ConfigMap ${proxyNs}/uyuni-ca ca.crt: 1 certificate(s), none the new CA`);
    const bundle = `${oldCa.trimEnd()}\n${newCa}`;
    const cm = (await p.kubectl(['-n', proxyNs, 'create', 'configmap', 'uyuni-ca', `--from-literal=ca.crt=${bundle}`, '--dry-run=client', '-o', 'yaml'])).out;
    expect((await p.kubectl(['apply', '-f', '-'], cm)).code).toBe(0);

    const rotated = await cli('run', plans['ssl-rotate'].dir, { ...k, yes: true });
    expect({ code: rotated.code, err: rotated.err }).toEqual({ code: 0, err: expect.any(String) });
    for (const name of ['uyuni-cert', 'db-cert']) {
      const served = await secret(name, 'tls.crt');
      expect(verifies(newCa, served)).toBe(true);
      expect(verifies(oldCa, served)).toBe(false);
      expect(await secret(name, 'ca.crt')).toBe(newCa);
    }
    const pod = (await deployment('uyuni')).spec.template;
    expect(pod.metadata.annotations['uyuni-cdk.io/ca-rotation']).toBe('rotate uyuni-ca-next');
    expect(pod.spec.initContainers.map((c: any) => c.name)).toEqual(['init-volumes', 'db-waiter']);
    const history = JSON.parse((await p.kubectl(['-n', ns, 'get', 'configmap', 'uyuni-cdk-history', '-o', 'json'])).out);
    const identity = JSON.parse(history.data.identity);
    const id = identity.value ?? identity;
    expect(id.caRotation).toMatchObject({ phase: 'rotated', caSecret: 'uyuni-ca-next', plan: 'ssl-rotate' });
    expect(id.caFingerprint).toBe(id.caRotation.caFingerprint);
  });

  it('a second phase 2 writes nothing but the run\'s own; the install that does not know the rotation is refused, the rotation\'s install keeps it', async () => {
    let mark = auditSize(p.dir);
    const again = await cli('run', plans['ssl-rotate'].dir, k);
    expect({ code: again.code, err: again.err }).toEqual({ code: 0, err: expect.any(String) });
    expect(writes(p, mark, ns).filter((w) => !runOwn(w))).toEqual([]);
    mark = auditSize(p.dir);
    const back = await cli('run', before.dir, { ...k, yes: true });
    expect(back.code).toBe(1);
    expect(back.err).toContain('the CA that plan ssl-rotate rotated to');
    expect(writes(p, mark, ns).filter((w) => !runOwn(w))).toEqual([]);
    // the install of the rotation's configuration keeps the server on the new CA
    const served = await secret('uyuni-cert', 'tls.crt');
    const kept = await cli('run', plans.install.dir, { ...k, yes: true });
    expect({ code: kept.code, err: kept.err }).toEqual({ code: 0, err: expect.any(String) });
    expect(await secret('uyuni-cert', 'tls.crt')).toBe(served);
  });
});
