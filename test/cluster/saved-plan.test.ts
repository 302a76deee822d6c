/**
 * A saved plan of an upgrade over objects the upstream chart's Helm release made, against
 * kube-apiserver (issue 34, "One plan verdict"): `plan --out FILE` lists the take-overs, `run FILE`
 * approves exactly those and marks them, and refuses, writing nothing (the audit log shows it),
 * a take-over the cluster gained after the file was saved. The simulator's suite is
 * test/runtime/e2e/saved-plan-verdict.test.ts.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { cli } from '../runtime/e2e/harness';
import { dist, installedAsPostgres16, plane, runOwn, writes } from './helpers';
import { auditSize } from './plane/plane';

const p = plane();
const HELM_RELEASE = 'meta.helm.sh/release-name';
const ADOPTED_FROM = 'uyuni-cdk.io/adopted-from';

describe('a saved plan of dist/upgrade over objects of a Helm release, against kube-apiserver', () => {
  const ns = p.namespace('saved');
  const helm = `Helm release ${ns}/uyuni`;
  const opts = { kubeconfig: p.kubeconfig, namespace: ns };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'uyuni-saved-'));
  const get = (kind: string, name: string) => p.get(ns, kind, name);
  /** As the chart leaves an object: Helm's label and annotations instead of ours (kubectl replace). */
  const helmOwned = async (kind: string, name: string) => {
    const live = await get(kind, name);
    live.metadata.labels = { 'app.kubernetes.io/managed-by': 'Helm' };
    live.metadata.annotations = { [HELM_RELEASE]: 'uyuni', 'meta.helm.sh/release-namespace': ns };
    const r = await p.kubectl(['replace', '-f', '-'], JSON.stringify(live));
    expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: '' });
  };
  const adoptedFrom = async (kind: string, name: string) => (await get(kind, name))?.metadata.annotations?.[ADOPTED_FROM];

  beforeAll(async () => {
    await installedAsPostgres16(p, ns);
    await helmOwned('service', 'web');
  });

  afterAll(async () => {
    await p.kubectl(['delete', 'namespace', ns, '--wait=false']);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a take-over gained after the plan was saved: run FILE refuses, naming it, and writes nothing but its lock', async () => {
    const file = path.join(dir, 'first.plan');
    const planned = await cli('plan', dist('upgrade'), { ...opts, out: file });
    expect(planned.code).toBe(0);
    expect(JSON.parse(fs.readFileSync(file, 'utf8')).result.takeovers.map((t: { object: string; owner: string }) => [t.object, t.owner])).toEqual([[`Service/web (${ns})`, helm]]);
    await helmOwned('configmap', 'uyuni-config');
    const mark = auditSize(p.dir);
    const r = await cli('run', file, { kubeconfig: p.kubeconfig });
    expect(r.code).toBe(1);
    expect(r.err).toContain(`take-overs the saved plan does not list: ConfigMap/uyuni-config (${ns}) from ${helm} (adopt)`);
    expect(r.err).toContain('nothing was done');
    expect(writes(p, mark, ns).filter((w) => !runOwn(w))).toEqual([]);
    expect([await adoptedFrom('service', 'web'), await adoptedFrom('configmap', 'uyuni-config')]).toEqual([undefined, undefined]);
  });

  it('plan --out lists both take-overs; run FILE --adopt is refused; run FILE approves exactly them, marks them and upgrades', async () => {
    const file = path.join(dir, 'second.plan');
    const planned = await cli('plan', dist('upgrade'), { ...opts, out: file });
    expect(planned.out).toMatch(new RegExp(`adopt {2}Service/web \\(${ns}\\) {2}owner: ${helm}[^\\n]*asked first`));
    expect(planned.out).toMatch(new RegExp(`adopt {2}ConfigMap/uyuni-config \\(${ns}\\) {2}owner: ${helm}[^\\n]*asked first`));
    const flagged = await cli('run', file, { kubeconfig: p.kubeconfig, adopt: true });
    expect(flagged.code).toBe(2);
    expect(flagged.err).toContain('--adopt belong to `uyuni-cdk plan --out` (its decision flags are taken from the file: none;');
    const r = await cli('run', file, { kubeconfig: p.kubeconfig });
    expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: '' });
    expect(r.out).toContain('going ahead: the saved plan was reviewed');
    expect(r.out).toContain(`adopt Service/web (${ns}): taken over from ${helm}`);
    expect(r.out).toContain(`adopt ConfigMap/uyuni-config (${ns}): taken over from ${helm}`);
    expect([await adoptedFrom('service', 'web'), await adoptedFrom('configmap', 'uyuni-config')]).toEqual([helm, helm]);
    // ours again: the run's apply put our labels on them
    expect((await get('service', 'web')).metadata.labels['app.kubernetes.io/managed-by']).toBe('uyuni-cdk');
  });
});
