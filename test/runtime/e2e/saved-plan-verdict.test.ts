/**
 * A saved plan holds the whole verdict (issue 34, "One plan verdict"): an upgrade's take-overs of
 * what Helm made, the lost credentials and the decision flags are in what `plan --out FILE`
 * writes, and `run FILE` goes ahead only on what the file listed.
 */
import * as fs from 'fs';
import * as path from 'path';
import { startSimulator, Simulator } from '../../sim';
import { changes, cli, tmpDir } from './harness';
import { inspectJobs } from './inspect-facts';
import { dist } from './migration';

const NS = 'uyuni';
const ADOPTED_FROM = 'uyuni-cdk.io/adopted-from';
const HELM = 'Helm release uyuni/uyuni';

let sim: Simulator;
afterEach(async () => {
  await sim?.stop();
});

/** As the upstream chart leaves an object: Helm's labels and annotations, none of ours. */
function helmOwned(apiVersion: string, kind: string, name: string): void {
  const live = sim.get(apiVersion, kind, name, NS);
  sim.put({ ...live, metadata: { name, namespace: NS, labels: { 'app.kubernetes.io/managed-by': 'Helm' }, annotations: { 'meta.helm.sh/release-name': 'uyuni', 'meta.helm.sh/release-namespace': NS } } });
}

/** An installed server whose Service/web and ConfigMap/uyuni-config the chart's Helm release made. */
async function helmInstall(): Promise<void> {
  sim = await startSimulator({ jobs: inspectJobs() });
  expect((await cli('run', dist('install'), { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
  helmOwned('v1', 'Service', 'web');
  helmOwned('v1', 'ConfigMap', 'uyuni-config');
}

const adoptedFrom = (kind: string, name: string) => sim.get('v1', kind, name, NS).metadata.annotations?.[ADOPTED_FROM];

describe('repro', () => {
  it('live run refuses, plan --out then run FILE goes ahead', async () => {
    await helmInstall();
    const live = await cli('run', dist('upgrade'), { kubeconfig: sim.kubeconfigPath });
    console.log('LIVE', live.code, live.err);
    const file = path.join(tmpDir(), 'upgrade.plan');
    const planned = await cli('plan', dist('upgrade'), { kubeconfig: sim.kubeconfigPath, out: file });
    console.log('PLAN', planned.code, planned.out.split('\n').slice(0, 6).join('\n'));
    console.log('FILE lists the take-overs:', fs.readFileSync(file, 'utf8').includes(HELM), JSON.parse(fs.readFileSync(file, 'utf8')).options);
    const mark = sim.requests.length;
    const r = await cli('run', file, { kubeconfig: sim.kubeconfigPath });
    console.log('RUN FILE', r.code, r.err, r.out.split('\n').filter((l) => /going ahead|adopt/.test(l)).join('\n'));
    console.log('adopted-from', adoptedFrom('Service', 'web'), adoptedFrom('ConfigMap', 'uyuni-config'), changes(sim.requests.slice(mark)).length);
  });
});
