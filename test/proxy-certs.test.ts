// Job uyuni-proxy-certs run for real: Debian's python3 and PyYAML (the proxy-httpd image carries
// both: its uyuni-configure.py reads the tarball with them) against the API simulator, with a
// config tarball whose fields hold what the server writes there: an OpenSSL text dump followed by
// the PEM block (proxy-helm README @ 00f177a9), made here by the real openssl.
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import YAML from 'yaml';
import { runScript, serviceAccountDir } from './helpers/script-run';
import { tempDir } from './helpers/synth';
import { Simulator, startSimulator } from './sim';

const NS = 'uyuni-proxy';
const OURS = { 'app.kubernetes.io/part-of': 'uyuni-proxy', 'app.kubernetes.io/component': 'proxy', 'app.kubernetes.io/managed-by': 'uyuni-cdk' };

function openssl(args: string[], input?: string): string {
  const r = spawnSync('openssl', args, { encoding: 'utf8', input });
  expect({ status: r.status, err: r.stderr }).toEqual({ status: 0, err: expect.any(String) });
  return r.stdout;
}

interface Pem { cert: string; key: string; dump: string }

/** A certificate and its key as PEM, and the certificate as the server writes it (text dump, then PEM). */
function certificate(dir: string, cn: string): Pem {
  const key = path.join(dir, `${cn}.key`);
  const crt = path.join(dir, `${cn}.crt`);
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-subj', `/CN=${cn}`, '-days', '30', '-out', crt]);
  return { cert: fs.readFileSync(crt, 'utf8'), key: fs.readFileSync(key, 'utf8'), dump: openssl(['x509', '-in', crt, '-text']) };
}

interface Tarball { dir: string; config: string; httpd: string }

/** config.yaml and httpd.yaml of a config tarball, each as YAML text. */
function tarball(fields: { ca?: string; crt?: string; key?: string }, stringify: (v: unknown) => string = (v) => YAML.stringify(v)): Tarball {
  const dir = tempDir('uyuni-cdk-proxy-certs-');
  const config = { server: 'uyuni.example.com', proxy_fqdn: 'proxy.example.com', email: 'admin@example.com', max_cache_size_mb: 2048, ...(fields.ca ? { ca_crt: fields.ca } : {}) };
  const httpd = { httpd: { system_id: '<?xml version="1.0"?><params/>', ...(fields.crt ? { server_crt: fields.crt } : {}), ...(fields.key ? { server_key: fields.key } : {}) } };
  fs.writeFileSync(path.join(dir, 'config.yaml'), stringify(config));
  fs.writeFileSync(path.join(dir, 'httpd.yaml'), stringify(httpd), { mode: 0o600 });
  return { dir, config: path.join(dir, 'config.yaml'), httpd: path.join(dir, 'httpd.yaml') };
}

let sim: Simulator;
let pki: string;
let ca: Pem;
let proxyCert: Pem;
beforeAll(() => {
  pki = tempDir('uyuni-cdk-proxy-pki-');
  ca = certificate(pki, 'uyuni-ca');
  proxyCert = certificate(pki, 'proxy.example.com');
});
beforeEach(async () => {
  sim = await startSimulator();
  sim.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
});
afterEach(async () => {
  await sim?.stop();
});

/** Runs the script as the Job does (python3 -c <text>), with only PATH and its environment. */
function run(t: Tarball, env: Record<string, string> = {}): Promise<{ code: number; out: string }> {
  const sa = serviceAccountDir();
  return runScript('proxy-certs.py', {
    NAMESPACE: NS, CONFIG_FILE: t.config, HTTPD_FILE: t.httpd, CERT_SECRET: 'proxy-cert', CA_CONFIGMAP: 'uyuni-ca',
    OBJECT_LABELS: JSON.stringify(OURS), MANAGED_BY_LABEL: 'app.kubernetes.io/managed-by', MANAGED_BY: 'uyuni-cdk',
    API_URL: sim.url, SA_DIR: sa, ...env,
  }, 'python3');
}

const secret = () => sim.get('v1', 'Secret', 'proxy-cert', NS);
const configMap = () => sim.get('v1', 'ConfigMap', 'uyuni-ca', NS);
const decoded = (key: string) => Buffer.from(secret()?.data?.[key] ?? '', 'base64').toString('utf8');

describe('proxy-certs.py (proxy-helm templates/cert.yaml @ 00f177a9) against the API simulator', () => {
  it('makes Secret proxy-cert and ConfigMap uyuni-ca from the tarball, the PEM blocks only, labelled, and prints no key', async () => {
    const r = await run(tarball({ ca: ca.dump, crt: proxyCert.dump, key: proxyCert.key }));
    expect(r.code).toBe(0);
    expect(secret()?.type).toBe('kubernetes.io/tls');
    expect(secret()?.metadata?.labels).toEqual(OURS);
    expect(decoded('tls.crt')).toBe(proxyCert.cert);
    expect(decoded('tls.key')).toBe(proxyCert.key);
    expect(decoded('tls.crt')).not.toContain('Certificate:');
    expect(configMap()?.data).toEqual({ 'ca.crt': ca.cert });
    expect(configMap()?.metadata?.labels).toEqual(OURS);
    // The certificate and key belong together, as openssl sees them.
    const pub = (args: string[], input: string) => openssl(args, input);
    expect(pub(['x509', '-noout', '-pubkey'], decoded('tls.crt'))).toBe(pub(['pkey', '-pubout'], decoded('tls.key')));
    expect(r.out).toContain('created Secret proxy-cert');
    expect(r.out).toContain('created ConfigMap uyuni-ca');
    for (const s of ['PRIVATE KEY', proxyCert.key.split('\n')[1], 'test-token']) expect(r.out).not.toContain(s);
  });

  it('reads the YAML as YAML: double-quoted scalars too, and keeps only the first certificate of a chain, as the chart', async () => {
    const chain = `${proxyCert.dump}${ca.cert}`;
    const r = await run(tarball({ ca: ca.dump, crt: chain, key: proxyCert.key }, (v) => JSON.stringify(v)));
    expect(r.code).toBe(0);
    expect(decoded('tls.crt')).toBe(proxyCert.cert);
    expect(configMap()?.data?.['ca.crt']).toBe(ca.cert);
  });

  it('keeps objects the user made, whatever the tarball holds', async () => {
    const mine = Buffer.from('mine').toString('base64');
    sim.put({ apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls', metadata: { name: 'proxy-cert', namespace: NS }, data: { 'tls.crt': mine, 'tls.key': mine } });
    sim.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'uyuni-ca', namespace: NS }, data: { 'ca.crt': 'my CA' } });
    const r = await run(tarball({ ca: ca.dump, crt: proxyCert.dump, key: proxyCert.key }));
    expect(r.code).toBe(0);
    expect(decoded('tls.crt')).toBe('mine');
    expect(configMap()?.data).toEqual({ 'ca.crt': 'my CA' });
    expect(r.out).toContain('Secret proxy-cert exists and is not made by uyuni-cdk: kept as it is');
    expect(r.out).toContain('ConfigMap uyuni-ca exists and is not made by uyuni-cdk: kept as it is');
    expect(sim.requests.filter((q) => q.method === 'PUT' || q.method === 'POST')).toEqual([]);
  });

  it('replaces what it made before when the tarball holds a new certificate, and leaves an unchanged one alone', async () => {
    expect((await run(tarball({ ca: ca.dump, crt: proxyCert.dump, key: proxyCert.key }))).code).toBe(0);
    const renewed = certificate(pki, 'proxy.example.com-renewed');
    const r = await run(tarball({ ca: ca.dump, crt: renewed.dump, key: renewed.key }));
    expect(r.code).toBe(0);
    expect(decoded('tls.crt')).toBe(renewed.cert);
    expect(decoded('tls.key')).toBe(renewed.key);
    expect(r.out).toContain('replaced Secret proxy-cert');
    expect(r.out).toContain('ConfigMap uyuni-ca is up to date');
    expect(secret()?.metadata?.labels).toEqual(OURS);
  });

  it('fails naming the missing fields and the command for each object that is neither there nor in the tarball', async () => {
    const r = await run(tarball({ crt: proxyCert.dump }));
    expect(r.code).toBe(1);
    expect(r.out).toContain('Secret proxy-cert: the tarball has no httpd.server_crt and httpd.server_key (httpd.yaml); '
      + 'create it: kubectl -n uyuni-proxy create secret tls proxy-cert --cert=<the proxy certificate> --key=<its key>');
    expect(r.out).toContain('ConfigMap uyuni-ca: the tarball has no ca_crt (config.yaml); '
      + 'create it: kubectl -n uyuni-proxy create configmap uyuni-ca --from-file=ca.crt=<the CA certificate>');
    // A certificate without its key makes no Secret ("should not render proxy-cert when server_key is missing").
    expect(secret()).toBeUndefined();
    expect(configMap()).toBeUndefined();
  });

  it('succeeds without the fields when the user made both objects', async () => {
    sim.put({ apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls', metadata: { name: 'proxy-cert', namespace: NS }, data: { 'tls.crt': 'eA==', 'tls.key': 'eA==' } });
    sim.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'uyuni-ca', namespace: NS }, data: { 'ca.crt': 'x' } });
    const r = await run(tarball({}));
    expect(r.code).toBe(0);
    expect(r.out).toContain('Secret proxy-cert exists; the tarball has no httpd.server_crt and httpd.server_key (httpd.yaml): kept as it is');
  });

  it('fails with the API\'s own words when the service account may not read an object', async () => {
    sim.failNext(1, 403, 'GET /api/v1/namespaces');
    const r = await run(tarball({ ca: ca.dump, crt: proxyCert.dump, key: proxyCert.key }));
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/uyuni-proxy-certs: reading Secret proxy-cert: HTTP 403: .*simulated RBAC refusal/);
    expect(secret()).toBeUndefined();
  });

  it('fails, naming the file, when httpd.yaml is not YAML', async () => {
    const t = tarball({ ca: ca.dump });
    fs.writeFileSync(t.httpd, 'httpd: [unclosed\n');
    const r = await run(t);
    expect(r.code).toBe(1);
    expect(r.out).toContain('uyuni-proxy-certs: httpd.yaml is not YAML');
    expect(configMap()).toBeUndefined();
  });
});
