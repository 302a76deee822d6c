/**
 * dist/upgrade through the runtime against kube-apiserver, over an install in the same namespace:
 * the inspect Jobs print their facts (the fake kubelet's scenario, as the simulator's do), the
 * gates pass, the stop-server step scales the server and its database to 0 through the real
 * Deployment controller, the data Jobs run under the real Job controller, the server comes back.
 */
import { readPlan } from '../../src/plan/reader';
import { cli } from '../runtime/e2e/harness';
import { dist, installedAsPostgres16, plane, runOwn, until, writes } from './helpers';
import { auditSize } from './plane/plane';

const p = plane();

describe('dist/upgrade against kube-apiserver', () => {
  const ns = p.namespace('upgrade');
  const opts = { kubeconfig: p.kubeconfig, namespace: ns };
  const get = (kind: string, name: string) => p.get(ns, kind, name);

  beforeAll(async () => {
    await installedAsPostgres16(p, ns);
  });

  afterAll(async () => {
    await p.kubectl(['delete', 'namespace', ns, '--wait=false']);
  });

  it('runs with its stops to done: the facts pass the gates, server and database stopped, upgraded, back', async () => {
    const mark = auditSize(p.dir);
    const r = await cli('run', dist('upgrade'), { ...opts, yes: true });
    expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: expect.any(String) });
    expect(r.out).toContain('current_pg_version=16');
    expect(r.out).toMatch(/scale to 0 Deployment\/uyuni \([^)]*\): done/);
    expect(r.out).toMatch(/scale to 0 Deployment\/db \([^)]*\): done/);
    // The stops went through the scale subresource or a patch of the Deployments, then back to 1.
    const sent = writes(p, mark, ns);
    expect(sent.some((w) => /deployments(\/scale)?\/db 20\d/.test(w))).toBe(true);
    for (const s of readPlan(dist('upgrade')).steps) {
      for (const o of s.objects.filter((x) => x.kind === 'Job')) {
        const job = await get('job', o.name);
        expect([o.name, job?.status?.succeeded]).toEqual([o.name, 1]);
      }
    }
    expect(await get('pvc', 'var-pgsql18')).toBeDefined();
    await until('db and uyuni available again', async () =>
      (await get('deployment', 'db'))?.status?.availableReplicas === 1 && (await get('deployment', 'uyuni'))?.status?.availableReplicas === 1);
    const db = await get('deployment', 'db');
    expect(db.spec.template.spec.containers[0].image).toBe('registry.opensuse.org/uyuni/server-postgresql:2026.08');
    // upgrade.ca: keep: the install's CA objects are kept.
    expect((await p.kubectl(['-n', ns, 'get', 'issuer/uyuni-issuer', 'certificate/uyuni-ca', 'certificate/uyuni-cert', 'certificate/db-cert'])).code).toBe(0);
  });

  it('plan then shows no change: the finished upgrade\'s data steps are skipped, nothing stops', async () => {
    const plan = await cli('plan', dist('upgrade'), { ...opts, detailedExitcode: true });
    expect({ code: plan.code, out: plan.out }).toEqual({ code: 0, out: expect.stringMatching(/skipped/) });
    expect(plan.out).toMatch(/0 to create, 0 to update, 0 to delete, 0 to stop/);
  });

  it('a second run writes nothing but its own lock and its record in the history', async () => {
    const mark = auditSize(p.dir);
    const again = await cli('run', dist('upgrade'), { ...opts, yes: true });
    expect({ code: again.code, err: again.err }).toEqual({ code: 0, err: expect.any(String) });
    const sent = writes(p, mark, ns);
    expect(sent.filter((w) => / leases\//.test(w)).length).toBeGreaterThanOrEqual(2);
    expect(sent.filter((w) => !runOwn(w))).toEqual([]);
  });
});
