/**
 * `uyuni-cdk run dist/install` killed with SIGKILL mid-run (issue 37, point 5, "faults with real
 * components"): nothing of it runs on (no Ctrl-C handler, no release of its lock), then the
 * same command again against kube-apiserver. The killed run leaves its lock (Lease
 * uyuni-cdk-lock, its pid and host in the annotations) and a step half done (Deployment db
 * created, not yet rolled out; its generated Secrets written). The next run takes the lock over,
 * saying from whom and why (its holder's pid no longer runs on this host: src/runtime/safety/lock.ts
 * `staleness`), keeps the Secrets, and converges: plan then shows nothing to do, and one more
 * run writes only its own bookkeeping.
 */
import * as path from 'path';
import { spawnCli, tmpDir } from '../runtime/e2e/harness';
import { plane, runOwn, until, writes } from './helpers';
import { auditSize, ROOT } from './plane/plane';

const p = plane();
const DIST = path.join(ROOT, 'dist', 'install');

describe('run killed with SIGKILL mid-run, then run again, against kube-apiserver', () => {
  const ns = p.namespace('kill');
  const args = (verb: string, ...more: string[]) => [verb, DIST, '-n', ns, '--kubeconfig', p.kubeconfig, ...more];
  const get = (kind: string, name: string) => p.get(ns, kind, name);

  afterAll(async () => {
    await p.kubectl(['delete', 'namespace', ns, '--wait=false']);
  });

  it('the next run takes over the dead run\'s lock, saying whose, keeps its Secrets and converges', async () => {
    // the database's pod holds in its start: the run is waiting in step database when killed
    p.scenario({ deployments: { db: { startupMs: 'hold' } } }, ns);
    const killed = spawnCli([...args('run', '--yes'), '--run-dir', tmpDir()]);
    await until('Deployment db created by the run', () => get('deployment', 'db'), 120_000);
    killed.child.kill('SIGKILL');
    const dead = await killed.done;
    expect(dead.out).toMatch(/\[5\/7\] database: Deployment db/);
    expect(dead.out).not.toMatch(/\[6\/7\]/);

    const lease = await get('lease', 'uyuni-cdk-lock');
    expect(lease.metadata.annotations['uyuni-cdk.io/lock-pid']).toBe(String(killed.child.pid));
    const runId = lease.spec.holderIdentity as string;
    const credentials = (await get('secret', 'db-credentials')).metadata.uid as string;

    p.scenario({}, ns);
    const again = spawnCli([...args('run', '--yes'), '--run-dir', tmpDir()]);
    const done = await again.done;
    expect({ code: done.code, err: done.err }).toEqual({ code: 0, err: '' });
    expect(done.out).toContain(`lock Lease/uyuni-cdk-lock (${ns}): taken over from run ${runId} (plan install) by `);
    expect(done.out).toMatch(new RegExp(`, pid ${killed.child.pid}, since \\S+: its holder, pid ${killed.child.pid} on this host, is no longer running`));
    expect(done.out).toMatch(/Run complete/);
    expect((await get('secret', 'db-credentials')).metadata.uid).toBe(credentials);
    expect((await get('deployment', 'uyuni')).status.availableReplicas).toBe(1);

    const plan = await spawnCli(args('plan', '--detailed-exitcode')).done;
    expect({ code: plan.code, err: plan.err }).toEqual({ code: 0, err: '' });

    const mark = auditSize(p.dir);
    const third = await spawnCli([...args('run', '--yes'), '--run-dir', tmpDir()]).done;
    expect(third.code).toBe(0);
    expect(writes(p, mark, ns).filter((w) => !runOwn(w))).toEqual([]);
  }, 300_000);
});
