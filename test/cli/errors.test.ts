/**
 * One error path for every verb (issue 15 item 3): each class of API failure, against the
 * simulator or a real server in front of it, is one line saying what failed and what to check,
 * with the documented exit code, and no stack trace (unless --debug).
 */
import * as fs from 'fs';
import * as path from 'path';
import { EXIT } from '../../src/plan/exit-codes';
import { MissingKind } from '../../src/kube/api-errors';
import { startFaultProxy } from '../sim/faults';
import { startSimulator, Simulator } from '../sim';
import { cli, spawnCli, tmpDir } from '../runtime/e2e/harness';
import { job, namespace, pvc, writePlan } from '../runtime/plans';
import { Front, startAuthProxy, startTlsProxy, writeKubeconfig } from './servers';

const VERBS = ['plan', 'status', 'destroy', 'run'] as const;
/** A JS stack frame: never shown without --debug. */
const STACK = /\n\s+at .+\(.*:\d+:\d+\)/;

let sim: Simulator | undefined;
const fronts: Front[] = [];
afterEach(async () => {
  for (const f of fronts.splice(0)) await f.stop();
  await sim?.stop();
  sim = undefined;
});

const plan = () => writePlan([
  { name: 'namespace', objects: [namespace()] },
  { name: 'volumes', objects: [pvc('var-cache')] },
  { name: 'setup', objects: [job('setup')] },
]);

/** The one line a verb printed on stderr (run: its failure summary's first line). */
function oneLine(err: string): string {
  expect(err).not.toMatch(STACK);
  return err.trim().split('\n')[0];
}

describe('credentials and permissions', () => {
  it('says the cluster refused the credentials (a wrong token), exit 2, for every verb; the right token works', async () => {
    sim = await startSimulator();
    const auth = await startAuthProxy(sim.url, 'right-token');
    fronts.push(auth);
    const dir = tmpDir();
    const wrong = writeKubeconfig(path.join(dir, 'wrong'), { server: auth.url, token: 'wrong-token', insecure: true });
    for (const verb of VERBS) {
      const r = await cli(verb, plan(), { kubeconfig: wrong });
      expect({ verb, code: r.code }).toEqual({ verb, code: EXIT.badInput });
      expect(oneLine(r.err)).toMatch(/GET \/version: HTTP 401 Unauthorized: the cluster at http:\/\/127\.0\.0\.1:\d+ does not accept the credentials of user "test" \(context "test"\); check its token, client certificate or exec plugin/);
    }
    const right = writeKubeconfig(path.join(dir, 'right'), { server: auth.url, token: 'right-token', insecure: true });
    expect((await cli('plan', plan(), { kubeconfig: right })).code).toBe(EXIT.ok);
  });

  it('says which request was forbidden and how to see the permissions (403), exit 2', async () => {
    sim = await startSimulator();
    sim.failNext(100, 403, 'persistentvolumeclaims');
    const r = await cli('status', plan(), { kubeconfig: sim.kubeconfigPath });
    expect(r.code).toBe(EXIT.badInput);
    expect(oneLine(r.err)).toMatch(/^uyuni-cdk: GET PersistentVolumeClaim\/var-cache \(uyuni-test\): HTTP 403 Forbidden: .*; user "sim" \(context "sim"\) needs that permission \(RBAC\): kubectl --context sim auth can-i --list/);
  });

  it('fails the step (exit 1) when a 401 comes once a step ran, naming the step and where its logs are', async () => {
    sim = await startSimulator();
    // On the Job's apply: run reads the Jobs before its first write (a 401 there is exit 2, bad credentials before any step).
    sim.failNext(100, 401, 'PATCH /apis/batch/v1');
    const r = await cli('run', plan(), { kubeconfig: sim.kubeconfigPath });
    expect(r.code).toBe(EXIT.stepFailed);
    expect(oneLine(r.err)).toMatch(/HTTP 401 Unauthorized: the cluster at .* does not accept the credentials of user "sim"/);
    expect(r.err).toMatch(/logs and events: \//);
  });
});

describe('an API server that fails', () => {
  it('says it is failing after the retries, with the health check to run (5xx), exit 3', async () => {
    sim = await startSimulator();
    sim.failNext(1000, 503, 'GET /api/v1/namespaces/uyuni-test/persistentvolumeclaims');
    const r = await cli('plan', plan(), { kubeconfig: sim.kubeconfigPath });
    expect(r.code).toBe(EXIT.unreachable);
    expect(oneLine(r.err)).toMatch(/HTTP 503 ServiceUnavailable: .* \(8 attempts\); the API server at http:\/\/127\.0\.0\.1:\d+ is failing: check its health \(kubectl --context sim get --raw \/readyz\)/);
  }, 30_000);

  it('says a server that does not answer in time does not answer properly (timeout), exit 3', async () => {
    sim = await startSimulator();
    const faulty = await startFaultProxy(sim.url, [{ fault: 'hang', match: 'GET /version' }]);
    fronts.push(faulty);
    process.env.UYUNI_CDK_REQUEST_TIMEOUT_SECONDS = '0.3';
    try {
      const r = await cli('status', plan(), { kubeconfig: faulty.kubeconfigPath });
      expect(r.code).toBe(EXIT.unreachable);
      expect(oneLine(r.err)).toMatch(/the cluster at http:\/\/127\.0\.0\.1:\d+ does not answer properly: GET \/version: no complete answer within 0\.3 s \(timed out\); check the API server's load and the network to it/);
    } finally {
      delete process.env.UYUNI_CDK_REQUEST_TIMEOUT_SECONDS;
    }
  });

  it('says what is not a Kubernetes API server (404 on /version), exit 3', async () => {
    sim = await startSimulator();
    sim.failNext(100, 404, 'GET /version');
    const r = await cli('destroy', plan(), { kubeconfig: sim.kubeconfigPath });
    expect(r.code).toBe(EXIT.unreachable);
    expect(oneLine(r.err)).toMatch(/answers, but not as a Kubernetes API server \(GET \/version: HTTP 404\); check the server of cluster "sim"/);
  });
});

describe('a cluster out of reach', () => {
  it('says the connection was refused, and what to check, for every verb (closed port), exit 3', async () => {
    sim = await startSimulator();
    const kc = writeKubeconfig(path.join(tmpDir(), 'kc'), { server: sim.url, insecure: true });
    await sim.stop();
    sim = undefined;
    for (const verb of VERBS) {
      const r = await cli(verb, plan(), { kubeconfig: kc });
      expect({ verb, code: r.code }).toEqual({ verb, code: EXIT.unreachable });
      expect(oneLine(r.err)).toMatch(/cannot reach the cluster at http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED \(connection refused\); check that the API server runs and that .* the server of cluster "test" of the kubeconfig, is its address and port/);
    }
  });

  it('says a self-signed certificate is not trusted, and which field trusts it (TLS); with the CA it works', async () => {
    sim = await startSimulator();
    const dir = tmpDir();
    const tls = await startTlsProxy(sim.url, dir);
    fronts.push(tls);
    const untrusted = writeKubeconfig(path.join(dir, 'untrusted'), { server: tls.url });
    const r = await cli('plan', plan(), { kubeconfig: untrusted });
    expect(r.code).toBe(EXIT.unreachable);
    expect(oneLine(r.err)).toMatch(/cannot reach the cluster at https:\/\/127\.0\.0\.1:\d+: DEPTH_ZERO_SELF_SIGNED_CERT \(the API server's TLS certificate is not signed by a CA this kubeconfig trusts \(self-signed certificate\)\); set certificate-authority-data of cluster "test"/);
    const trusted = writeKubeconfig(path.join(dir, 'trusted'), { server: tls.url, ca: tls.caPem });
    expect((await cli('plan', plan(), { kubeconfig: trusted })).code).toBe(EXIT.ok);
  });

  it('says a host name does not resolve (DNS), exit 3', async () => {
    const kc = writeKubeconfig(path.join(tmpDir(), 'kc'), { server: 'https://no-such-api.invalid:6443' });
    const r = await cli('status', plan(), { kubeconfig: kc });
    expect(r.code).toBe(EXIT.unreachable);
    expect(oneLine(r.err)).toMatch(/cannot reach the cluster at https:\/\/no-such-api\.invalid:6443: (ENOTFOUND \(the host name no-such-api\.invalid does not resolve\); check the server of cluster "test" of the kubeconfig and this machine's DNS|EAI_AGAIN \(the DNS lookup of no-such-api\.invalid failed\))/);
  });
});

describe('kubeconfigs that are not', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['empty (/dev/null)', '', /not a usable kubeconfig: the file is empty$/],
    ['not YAML', 'clusters: [\n', /not a usable kubeconfig: not valid YAML \(.*line 2/],
    ['a list', '- a\n- b\n', /not a usable kubeconfig: it holds a list, not a kubeconfig \(a mapping with clusters, users and contexts\)$/],
    ['another kind', 'kind: Pod\napiVersion: v1\n', /not a usable kubeconfig: its kind is "Pod", not Config$/],
    ['clusters not a list', 'kind: Config\nclusters: {a: 1}\n', /not a usable kubeconfig: clusters is a mapping, not a list$/],
    ['a cluster without a server', 'kind: Config\nclusters: [{name: a, cluster: {}}]\n', /not a usable kubeconfig: clusters\[0\]\.cluster\.server is missing$/],
    ['no current-context', 'kind: Config\nclusters: [{name: a, cluster: {server: "https://x"}}]\ncontexts: [{name: c, context: {cluster: a}}]\n', /no current-context: pass --context \(contexts: c\)$/],
    ['a context naming no cluster', 'kind: Config\ncurrent-context: c\ncontexts: [{name: c, context: {cluster: gone}}]\n', /context "c" names cluster "gone", which it does not define$/],
    ['plain HTTP without insecure-skip-tls-verify', 'kind: Config\ncurrent-context: c\nclusters: [{name: a, cluster: {server: "http://127.0.0.1:1"}}]\ncontexts: [{name: c, context: {cluster: a}}]\n',
      /cluster "a" has the plain-HTTP server http:\/\/127\.0\.0\.1:1: set insecure-skip-tls-verify: true for it/],
  ];
  it.each(cases)('refuses one that is %s, naming the file and what is wrong (exit 2, nothing sent)', async (_what, text, want) => {
    const file = path.join(tmpDir(), 'kubeconfig');
    fs.writeFileSync(file, text);
    const r = await cli('plan', plan(), { kubeconfig: file });
    expect(r.code).toBe(EXIT.badInput);
    expect(oneLine(r.err)).toContain(`uyuni-cdk: ${file}: `);
    expect(oneLine(r.err)).toMatch(want);
  });

  it('reads /dev/null itself as an empty file', async () => {
    const r = await cli('plan', plan(), { kubeconfig: '/dev/null' });
    expect(r.code).toBe(EXIT.badInput);
    expect(oneLine(r.err)).toBe('uyuni-cdk: /dev/null: not a usable kubeconfig: the file is empty');
  });
});

describe('kinds the cluster does not serve', () => {
  it('names the CRD by its resource name (certificates.cert-manager.io) and what to install', () => {
    expect(new MissingKind('cert-manager.io/v1', 'Certificate').message).toBe(
      'cert-manager.io/v1 Certificate is not served by this cluster (no API cert-manager.io/v1): the CustomResourceDefinition certificates.cert-manager.io is missing (install cert-manager first)');
  });

  it('calls a built-in kind built in, spells its resource right, and lists what discovery serves', () => {
    const m = new MissingKind('storage.k8s.io/v1', 'StorageClass', ['csidrivers', 'csinodes']).message;
    expect(m).toBe('storage.k8s.io/v1 StorageClass is not served by this cluster (storage.k8s.io/v1 serves csidrivers, csinodes): StorageClass is built into Kubernetes, so this API server is of a version without it or has that API turned off');
    expect(m).not.toMatch(/CustomResourceDefinition|storageclasss/);
    expect(new MissingKind('traefik.io/v1alpha1', 'IngressRoute', ['middlewares']).message).toContain('the CustomResourceDefinition ingressroutes.traefik.io is missing or does not serve that version');
    expect(new MissingKind('example.org/v1', 'Policy').message).toContain('policies.example.org');
  });

  it('plan shows a kind missing from a served group with the names discovery gave', async () => {
    sim = await startSimulator({ certManager: false });
    const dir = writePlan([{ name: 'namespace', objects: [namespace()] }, { name: 'tls', objects: [{ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'c', namespace: 'uyuni-test' }, spec: {} }] }]);
    const r = await cli('plan', dir, { kubeconfig: sim.kubeconfigPath });
    expect(r.code).toBe(EXIT.ok);
    expect(r.out).toContain('missing-kind  Certificate/c (uyuni-test)  (cert-manager.io/v1 Certificate is not served by this cluster (no API cert-manager.io/v1): the CustomResourceDefinition certificates.cert-manager.io is missing (install cert-manager first))');
  });

  it('status still judges claims when StorageClasses cannot be listed (a namespaced user), as run does', async () => {
    sim = await startSimulator();
    const dir = plan();
    expect((await cli('run', dir, { kubeconfig: sim.kubeconfigPath })).code).toBe(EXIT.ok);
    sim.failNext(100, 403, 'storageclasses');
    const r = await cli('status', dir, { kubeconfig: sim.kubeconfigPath });
    expect(r.err).toBe('');
    expect(r.out).toMatch(/volumes\s+done/);
    expect(r.code).toBe(EXIT.ok);
  });
});

describe('--debug', () => {
  it.each(['status', 'run'])('%s: adds the stack to the one line, before or after the verb; without it there is none', async (verb) => {
    sim = await startSimulator();
    const auth = await startAuthProxy(sim.url, 'right-token');
    fronts.push(auth);
    const kc = writeKubeconfig(path.join(tmpDir(), 'kc'), { server: auth.url, token: 'wrong', insecure: true });
    const args = [verb, plan(), '--kubeconfig', kc, ...(verb === 'run' ? ['--run-dir', tmpDir()] : [])];
    const plain = await spawnCli(args).done;
    expect(plain.code).toBe(EXIT.badInput);
    expect(plain.err.trim().split('\n')).toHaveLength(1);
    expect(plain.err).toContain('HTTP 401 Unauthorized');
    for (const withDebug of [['--debug', ...args], [...args, '--debug']]) {
      const r = await spawnCli(withDebug).done;
      expect(r.code).toBe(EXIT.badInput);
      const line = (t: string) => t.split('\n')[0].replace(/after \d+\.\ds/, 'after …');
      expect(line(r.err)).toBe(line(plain.err));
      expect(r.err).toMatch(STACK);
    }
  }, 30_000);
});
