/**
 * A saved plan holds the whole verdict (issue 34, "One plan verdict"): the take-overs of what
 * another tool made (an upgrade's of the chart's Helm release), the lost credentials and every
 * decision flag are in what `plan --out FILE` writes, and `run FILE` goes ahead only on what the
 * file lists. Before, the file held neither: `run FILE` took over both objects below as "the saved
 * plan was reviewed", where the live run refused.
 */
import * as fs from 'fs';
import * as path from 'path';
import { startSimulator, Simulator } from '../../sim';
import { changes, cli, tmpDir } from './harness';
import { inspectJobs, putClaims } from './inspect-facts';
import { dist } from './migration';

const NS = 'uyuni';
const ADOPTED_FROM = 'uyuni-cdk.io/adopted-from';
const HELM = 'Helm release uyuni/uyuni';

let sim: Simulator;
afterEach(async () => {
  await sim?.stop();
});

/** As the upstream chart leaves an object: Helm's label and annotations, none of ours. */
function helmOwned(kind: string, name: string): void {
  const live = sim.get('v1', kind, name, NS);
  sim.put({ ...live, metadata: { name, namespace: NS, labels: { 'app.kubernetes.io/managed-by': 'Helm' }, annotations: { 'meta.helm.sh/release-name': 'uyuni', 'meta.helm.sh/release-namespace': NS } } });
}

/** An installed server, then the given objects made Helm's (as an install by the upstream chart has them). */
async function installed(...helm: Array<[kind: string, name: string]>): Promise<void> {
  sim = await startSimulator({ jobs: inspectJobs() });
  putClaims(sim);
  expect((await cli('run', dist('install'), { kubeconfig: sim.kubeconfigPath })).code).toBe(0);
  for (const [kind, name] of helm) helmOwned(kind, name);
}

const adoptedFrom = (kind: string, name: string): string | undefined => sim.get('v1', kind, name, NS).metadata.annotations?.[ADOPTED_FROM];
const savedFile = () => path.join(tmpDir('uyuni-saved-'), 'upgrade.plan');
const read = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8'));
/** What was written since `mark`: creates, patches, deletes (not reads, dry runs, the run's own lock or its access reviews). */
const writesSince = (mark: number) => changes(sim.requests.slice(mark)).map((r) => `${r.method} ${r.path}`);

describe('an upgrade over objects of the chart\'s Helm release, through a saved plan', () => {
  it('the live run asks (refused without a terminal); plan --out lists the take-overs; run FILE approves exactly those and marks them', async () => {
    await installed(['Service', 'web'], ['ConfigMap', 'uyuni-config']);
    let mark = sim.requests.length;
    const live = await cli('run', dist('upgrade'), { kubeconfig: sim.kubeconfigPath });
    expect(live.code).toBe(2);
    expect(live.out).toMatch(/adopt\s+Service\/web \(uyuni\)\s+\[\(run\)\]\s+taken over from Helm release uyuni\/uyuni/);
    expect(writesSince(mark)).toEqual([]);

    const file = savedFile();
    const planned = await cli('plan', dist('upgrade'), { kubeconfig: sim.kubeconfigPath, out: file });
    expect(planned.code).toBe(0);
    expect(planned.out).toMatch(/adopt {2}Service\/web \(uyuni\) {2}owner: Helm release uyuni\/uyuni [^\n]*asked first/);
    expect(planned.out).toMatch(/adopt {2}ConfigMap\/uyuni-config \(uyuni\) {2}owner: Helm release uyuni\/uyuni [^\n]*asked first/);
    expect(planned.out).toContain(`Saved the plan to ${file}: \`uyuni-cdk run ${file}\` applies exactly this, with its flags (none)`);
    const saved = read(file);
    expect(saved.format).toBe('uyuni-cdk saved plan 2');
    expect(saved.result.takeovers.map((t: { object: string; owner: string; action: string; asked?: boolean }) => [t.object, t.owner, t.action, t.asked]))
      .toEqual([['Service/web (uyuni)', HELM, 'adopt', true], ['ConfigMap/uyuni-config (uyuni)', HELM, 'adopt', true]]);
    expect(saved.result.lostCredentials).toEqual([]);
    expect(saved.flags).toEqual({ rerun: [], prune: true, purgeVolumes: false, adopt: false, allowFqdnChange: false, allowDowngrade: false, allowNewCa: false });

    mark = sim.requests.length;
    const r = await cli('run', file, { kubeconfig: sim.kubeconfigPath });
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    // the destructive changes shown are the file's, the take-overs among them, approved as the saved plan
    expect(r.out).toMatch(/adopt\s+Service\/web \(uyuni\)\s+\[\(run\)\][^\n]*\n\s+adopt\s+ConfigMap\/uyuni-config \(uyuni\)\s+\[\(run\)\][^\n]*\n[\s\S]*going ahead: the saved plan was reviewed/);
    expect(r.out).toContain(`adopt Service/web (uyuni): taken over from ${HELM}`);
    expect(r.out).toContain(`adopt ConfigMap/uyuni-config (uyuni): taken over from ${HELM}`);
    expect([adoptedFrom('Service', 'web'), adoptedFrom('ConfigMap', 'uyuni-config')]).toEqual([HELM, HELM]);
  });

  it('a take-over the cluster gained after the plan was saved: run FILE refuses, naming it, and writes nothing', async () => {
    await installed(['Service', 'web']);
    const file = savedFile();
    expect((await cli('plan', dist('upgrade'), { kubeconfig: sim.kubeconfigPath, out: file })).code).toBe(0);
    expect(read(file).result.takeovers.map((t: { object: string }) => t.object)).toEqual(['Service/web (uyuni)']);
    // meanwhile the chart's release takes the ConfigMap too
    helmOwned('ConfigMap', 'uyuni-config');
    const mark = sim.requests.length;
    const r = await cli('run', file, { kubeconfig: sim.kubeconfigPath });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/the cluster changed since the plan was saved \([^)]+\): [^\n]*take-overs the saved plan does not list: ConfigMap\/uyuni-config \(uyuni\) from Helm release uyuni\/uyuni \(adopt\)/);
    expect(r.err).toContain('destructive changes the saved plan does not list: adopt ConfigMap/uyuni-config (uyuni) [(run)]');
    expect(r.err).toContain('nothing was done');
    expect(r.out).not.toContain('going ahead');
    expect(writesSince(mark)).toEqual([]);
    expect([adoptedFrom('Service', 'web'), adoptedFrom('ConfigMap', 'uyuni-config')]).toEqual([undefined, undefined]);
  });
});

describe('the decision flags of a saved plan', () => {
  it('plan --adopt --out saves --adopt; run FILE --adopt is refused (exit 2): the flags come from the file', async () => {
    // an install over a Service the chart's release made: refused without --adopt (not an upgrade of it)
    await installed(['Service', 'web']);
    const refusing = savedFile();
    const shown = await cli('plan', dist('install'), { kubeconfig: sim.kubeconfigPath, out: refusing });
    expect(shown.out).toMatch(/refuse {2}Service\/web \(uyuni\) {2}owner: Helm release uyuni\/uyuni/);
    expect(read(refusing).flags.adopt).toBe(false);
    let mark = sim.requests.length;
    // the saved plan said "refuse": run FILE refuses as the live run does ...
    const refused = await cli('run', refusing, { kubeconfig: sim.kubeconfigPath });
    expect(refused.code).toBe(1);
    expect(refused.err).toContain(`refusing to take over 1 object(s): Service/web (uyuni) belongs to ${HELM}`);
    // ... and --adopt beside it does not turn the file's "refuse" into a take-over
    const flagged = await cli('run', refusing, { kubeconfig: sim.kubeconfigPath, adopt: true });
    expect(flagged.code).toBe(2);
    expect(flagged.err).toContain(`${refusing} is a saved plan: it carries its own options; --adopt belong to \`uyuni-cdk plan --out\` (its decision flags are taken from the file: none;`);
    expect(writesSince(mark)).toEqual([]);
    expect(adoptedFrom('Service', 'web')).toBeUndefined();

    const adopting = savedFile();
    const planned = await cli('plan', dist('install'), { kubeconfig: sim.kubeconfigPath, adopt: true, out: adopting });
    expect(planned.out).toMatch(/adopt {2}Service\/web \(uyuni\) {2}owner: Helm release uyuni\/uyuni/);
    expect(planned.out).toContain('with its flags (--adopt)');
    expect(read(adopting).flags.adopt).toBe(true);
    expect(read(adopting).result.takeovers.map((t: { object: string; action: string }) => [t.object, t.action])).toEqual([['Service/web (uyuni)', 'adopt']]);
    const again = await cli('run', adopting, { kubeconfig: sim.kubeconfigPath, adopt: true, rerun: ['namespace'] });
    expect(again.code).toBe(2);
    expect(again.err).toContain('--rerun, --adopt belong to `uyuni-cdk plan --out` (its decision flags are taken from the file: --adopt;');
    mark = sim.requests.length;
    const r = await cli('run', adopting, { kubeconfig: sim.kubeconfigPath });
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain(`adopt Service/web (uyuni): taken over from ${HELM}`);
    expect(adoptedFrom('Service', 'web')).toBe(HELM);
  });

  it('an older saved plan, or one whose flags are gone, is refused by name, never read as "no flags"', async () => {
    await installed();
    const file = savedFile();
    expect((await cli('plan', dist('upgrade'), { kubeconfig: sim.kubeconfigPath, out: file })).code).toBe(0);
    const saved = read(file);
    const mark = sim.requests.length;

    const older = path.join(path.dirname(file), 'older.plan');
    const { flags: _flags, ...v1 } = saved;
    fs.writeFileSync(older, JSON.stringify({ ...v1, format: 'uyuni-cdk saved plan 1', options: {} }, null, 2));
    const r1 = await cli('run', older, { kubeconfig: sim.kubeconfigPath });
    expect(r1.code).toBe(2);
    expect(r1.err).toContain(`${older}: a saved plan of another uyuni-cdk (format "uyuni-cdk saved plan 1", this one reads "uyuni-cdk saved plan 2"): nothing was done`);

    const flagless = path.join(path.dirname(file), 'flagless.plan');
    fs.writeFileSync(flagless, JSON.stringify({ ...saved, flags: { ...saved.flags, adopt: undefined } }, null, 2));
    const r2 = await cli('run', flagless, { kubeconfig: sim.kubeconfigPath });
    expect(r2.code).toBe(2);
    expect(r2.err).toContain(`${flagless}: its decision flags are missing or damaged (flags.adopt): nothing was done`);
    expect(sim.requests.slice(mark)).toEqual([]);
  });
});
