/**
 * Smaller items of issue 38 (point 8) around plan and run output.
 */
import * as path from 'path';
import { startSimulator, Simulator } from '../../sim';
import { cli, ROOT } from './harness';

const dist = (p: string) => path.join(ROOT, 'dist', p);
const count = (text: string, s: string) => text.split(s).length - 1;

let sim: Simulator;
afterEach(async () => {
  await sim?.stop();
});

describe('plan', () => {
  it('an action on an object an earlier step makes says so, once: `delete  PersistentVolumeClaim/…  (made by step volumes of this run)`', async () => {
    sim = await startSimulator();
    const p = await cli('plan', dist('migrate'), { kubeconfig: sim.kubeconfigPath });
    expect(p.out).toContain('  action    delete   PersistentVolumeClaim/migration-data (uyuni)  (made by step volumes of this run)\n');
    expect(p.out).not.toContain('delete delete');
    expect(p.out).toMatch(/action {4}not done scale to 0 Deployment\/uyuni \(uyuni\) {2}\(not present, nothing to scale\)/);
  });

  it('a missing object several steps need is listed once, naming the steps (dist/proxy on an empty cluster)', async () => {
    sim = await startSimulator();
    const p = await cli('plan', dist('proxy'), { kubeconfig: sim.kubeconfigPath });
    const refusal = p.out.slice(p.out.indexOf('run would refuse before any write:'));
    expect(count(refusal, '- ConfigMap uyuni-proxy/proxy-configmap ')).toBe(1);
    expect(refusal).toContain('- ConfigMap uyuni-proxy/proxy-configmap (steps certs, proxy, tftp) is missing');
    expect(refusal).toContain('- Secret uyuni-proxy/httpd (steps certs, proxy) is missing');
    expect(refusal).toContain('- Secret uyuni-proxy/ssh (step proxy) is missing');
    const r = await cli('run', dist('proxy'), { kubeconfig: sim.kubeconfigPath, yes: true });
    expect(r.code).toBe(1);
    expect(r.err).toContain('3 requirements are not met');
    expect(count(r.err, 'ConfigMap uyuni-proxy/proxy-configmap')).toBe(1);
  });
});
