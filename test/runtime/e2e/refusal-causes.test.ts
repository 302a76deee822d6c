import { startSimulator, Simulator, SimOptions } from '../../sim';
import { cli } from './harness';
import { namespace, NS, writePlan } from '../plans';

let sim: Simulator;
async function start(opts: SimOptions = {}): Promise<Simulator> {
  sim = await startSimulator(opts);
  return sim;
}
afterEach(async () => {
  await sim?.stop();
});

const configMap = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS }, data: { a: '1' } });
const plan = () => writePlan([{ name: 'namespace', objects: [namespace()] }, { name: 'config', objects: [configMap('settings')] }]);

describe('API refusals are explained by their cause, not all as RBAC', () => {
  it('a webhook denial names the webhook', async () => {
    await start({ webhooks: [{ name: 'validation.gatekeeper.sh', kinds: ['ConfigMap'], action: 'deny', message: '[cm-policy] not allowed' }] });
    const r = await cli('run', plan(), { kubeconfig: sim.kubeconfigPath });
    expect(r.code).toBe(1);
    const said = r.out + r.err;
    expect(said).toContain('admission webhook "validation.gatekeeper.sh" denied the request: [cm-policy] not allowed');
    expect(said).toContain('the admission webhook validation.gatekeeper.sh refused it');
    expect(said).not.toContain('(RBAC)');
  });

  it('a webhook that cannot be called names the webhook, not the API server\'s health', async () => {
    await start({ webhooks: [{ name: 'cm.policy.example', kinds: ['ConfigMap'], action: 'fail' }] });
    const r = await cli('run', plan(), { kubeconfig: sim.kubeconfigPath });
    expect(r.code).toBe(1);
    const said = r.out + r.err;
    expect(said).toContain('the admission webhook cm.policy.example could not be called');
    expect(said).not.toContain('check its health');
  });

  it('a terminating namespace says so', async () => {
    await start();
    sim.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } });
    sim.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held', namespace: NS, finalizers: ['example.com/hold'] } });
    const del = await fetch(`${sim.url}/api/v1/namespaces/${NS}`, { method: 'DELETE' });
    expect(del.status).toBe(200);
    const r = await cli('run', plan(), { kubeconfig: sim.kubeconfigPath });
    // refused before the run's first write (its lock in the namespace), as a refusal: exit 1
    expect(r.code).toBe(1);
    const said = r.out + r.err;
    expect(said).toContain(`refused before any write: namespace ${NS} is being deleted (Terminating since `);
    expect(said).not.toContain('(RBAC)');
  });

  it('an exceeded quota names the ResourceQuota', async () => {
    await start();
    sim.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } });
    sim.put({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'no-pods', namespace: NS }, spec: { hard: { pods: '0' } } });
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'tool', namespace: NS }, spec: { containers: [{ name: 'c', image: 'x' }] } };
    const r = await cli('run', writePlan([{ name: 'namespace', objects: [namespace()] }, { name: 'pod', objects: [pod], waits: [] }]), { kubeconfig: sim.kubeconfigPath });
    expect(r.code).toBe(1);
    const said = r.out + r.err;
    expect(said).toContain('the ResourceQuota no-pods of that namespace has no room left');
    expect(said).not.toContain('(RBAC)');
  });
});
