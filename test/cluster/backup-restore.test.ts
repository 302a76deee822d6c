/**
 * dist/backup and then dist/restore through the runtime against kube-apiserver, over an install in
 * a namespace of their own: the Jobs print the facts the gates read (the fake kubelet's scenario,
 * the facts test/runtime/e2e/backup.test.ts gives the simulator), the stops scale the server and
 * its database to 0 through the real Deployment controller, the copy and restore Jobs run under the
 * real Job controller, the server comes back. The restore goes where the backup was taken: its
 * check Job mounts the backup claim, which dist/restore reads and never makes, and the real
 * scheduler leaves the pod Pending without it (Unschedulable: persistentvolumeclaim "uyuni-backup"
 * not found), where the simulator runs it anyway.
 *
 * Every run of either plan is a new one (its prepare step deletes the Jobs of the last run,
 * docs/backup.md), so `plan` afterwards shows the next backup or restore, not "no change", and a
 * second run writes its Jobs and its stops and starts again; what the suites check is that it
 * writes nothing else. The record Job (3 s here) has finished before the server stops: its step
 * waited for its account only at first, and on this server the run went on to stop-server 0.3 s
 * after creating the Job (the record of the pods would have been taken with the server stopped).
 */
import { cli } from '../runtime/e2e/harness';
import { BACKUP_COPIED, BACKUP_INSPECTED, backupPruned, PINNED, restoreChecked } from '../runtime/e2e/backup-facts';
import { dist, plane, runOwn, until, writes } from './helpers';
import { auditSize } from './plane/plane';

const p = plane();

const BACKUP_JOBS = {
  ...BACKUP_INSPECTED, ...BACKUP_COPIED, ...backupPruned(),
  'uyuni-backup-record': { durationMs: 3000, logs: ['uyuni-backup-record: 2 pods, the configuration and the identity recorded'] },
};
const RESTORE_JOBS = restoreChecked({ target_empty: 'true' });

describe('dist/backup then dist/restore against kube-apiserver', () => {
  const ns = p.namespace('backup');
  const opts = { kubeconfig: p.kubeconfig, namespace: ns };
  const get = (kind: string, name: string) => p.get(ns, kind, name);

  beforeAll(async () => {
    p.scenario({ jobs: { ...BACKUP_JOBS, ...RESTORE_JOBS } }, ns);
    const install = await cli('run', dist('install'), { ...opts, yes: true });
    expect({ code: install.code, err: install.err }).toEqual({ code: 0, err: expect.any(String) });
  });

  afterAll(async () => {
    await p.kubectl(['delete', 'namespace', ns, '--wait=false']);
  });

  it('runs with its stops to done: server and database stopped, copied, started again, pruned', async () => {
    const mark = auditSize(p.dir);
    const r = await cli('run', dist('backup'), { ...opts, yes: true });
    expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: expect.any(String) });
    expect(r.out).toContain('facts: backup_ok=true backup_id=20261201T203000Z backup_bytes=5368709120');
    expect(r.out).toMatch(/gate passed: fqdn is uyuni.example.com/);
    expect(r.out).toMatch(/gate passed: backup_ok is true/);
    // The stops, the copy, the starts and the prune, in this order, as the API server got them.
    const sent = writes(p, mark, ns);
    const first = (re: RegExp) => {
      const i = sent.findIndex((w) => re.test(w));
      expect([re.source, i >= 0]).toEqual([re.source, true]);
      return i;
    };
    const order = [
      first(/^patch deployments\/uyuni 200$/), first(/^patch deployments\/db 200$/), first(/^patch jobs\/uyuni-backup 201$/),
      sent.lastIndexOf('patch deployments/db 200'), sent.lastIndexOf('patch deployments/uyuni 200'), first(/^patch jobs\/uyuni-backup-prune 201$/),
    ];
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(new Set(order).size).toBe(order.length);
    // What the backup is taken with is recorded while the server still runs: the record Job
    // complete before the Job that stops the server is made.
    const recorded = Date.parse((await get('job', 'uyuni-backup-record'))?.status?.completionTime);
    const stopping = Date.parse((await get('job', 'uyuni-backup-stop-server'))?.metadata?.creationTimestamp);
    expect(recorded).toBeLessThanOrEqual(stopping);
    expect(r.out + r.err).not.toContain('read facts of Job/uyuni-backup-record');
    for (const job of ['uyuni-backup-inspect', 'uyuni-backup-inspect-db', 'uyuni-backup-record', 'uyuni-backup-stop-server', 'uyuni-backup-stop-db', 'uyuni-backup', 'uyuni-backup-prune']) {
      expect([job, (await get('job', job))?.status?.succeeded]).toEqual([job, 1]);
    }
    await until('db and uyuni available again', async () =>
      (await get('deployment', 'db'))?.status?.availableReplicas === 1 && (await get('deployment', 'uyuni'))?.status?.availableReplicas === 1);
    // The backup claim is not the server's: destroy of dist/install never selects it.
    const claim = await get('pvc', 'uyuni-backup');
    expect([claim?.status?.phase, claim?.metadata?.labels?.['app.kubernetes.io/part-of']]).toEqual(['Bound', 'uyuni-backup']);
  });

  it('plan then shows the next backup, not "no change": the last run\'s Jobs deleted, the server stopped again', async () => {
    const plan = await cli('plan', dist('backup'), { ...opts, detailedExitcode: true });
    expect(plan.code).toBe(2);
    expect(plan.out).toMatch(/Plan: 2 to create, 0 to update, 7 to delete, 2 to stop, \d+ unchanged/);
    expect(plan.out).toMatch(/action +stop +scale to 0 Deployment\/uyuni /);
    expect(plan.out).toMatch(/action +stop +scale to 0 Deployment\/db /);
  });

  it('a second run is a new backup: it writes only the last run\'s Jobs deleted and made again and the stops and starts', async () => {
    const mark = auditSize(p.dir);
    const again = await cli('run', dist('backup'), { ...opts, yes: true });
    expect({ code: again.code, err: again.err }).toEqual({ code: 0, err: expect.any(String) });
    // The record step's account, applied again unchanged (200) when its Job is made again: allowed, not required.
    const account = /^patch (serviceaccounts|roles|rolebindings)\/uyuni-backup-record 200$/;
    const sent = writes(p, mark, ns).filter((w) => !runOwn(w) && !account.test(w));
    const jobs = ['uyuni-backup-inspect', 'uyuni-backup-inspect-db', 'uyuni-backup-record', 'uyuni-backup-stop-server', 'uyuni-backup-stop-db', 'uyuni-backup', 'uyuni-backup-prune'];
    expect([...sent].sort()).toEqual([
      ...jobs.map((j) => `delete jobs/${j} 200`), ...jobs.map((j) => `patch jobs/${j} 201`),
      'patch deployments/db 200', 'patch deployments/db 200', 'patch deployments/uyuni 200', 'patch deployments/uyuni 200',
    ].sort());
  });

  it('restores over it, with its stops, to done: the server and its database run the recorded images by digest', async () => {
    const mark = auditSize(p.dir);
    const r = await cli('run', dist('restore'), { ...opts, yes: true });
    expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: expect.any(String) });
    expect(r.out).toMatch(/gate passed: target_empty is true/);
    expect(r.out).toContain(`registry.opensuse.org/uyuni/server:2026.08 → ${PINNED.server}`);
    const sent = writes(p, mark, ns);
    const first = (w: string) => {
      const i = sent.indexOf(w);
      expect([w, i >= 0]).toEqual([w, true]);
      return i;
    };
    // stopped, restored, then the database and the server made again with the recorded images
    const order = [first('patch deployments/uyuni 200'), first('patch deployments/db 200'), first('patch jobs/uyuni-restore 201'),
      sent.lastIndexOf('patch deployments/db 200'), sent.lastIndexOf('patch deployments/uyuni 200')];
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(new Set(order).size).toBe(order.length);
    for (const job of ['uyuni-restore-check', 'uyuni-restore-inspect-db', 'uyuni-stop-server', 'uyuni-stop-db', 'uyuni-restore-target', 'uyuni-restore']) {
      expect([job, (await get('job', job))?.status?.succeeded]).toEqual([job, 1]);
    }
    const images = (d: any) => [...d?.spec?.template?.spec?.initContainers ?? [], ...d?.spec?.template?.spec?.containers ?? []].map((c: any) => c.image);
    await until('db and uyuni available with the recorded images', async () => {
      const [db, server] = [await get('deployment', 'db'), await get('deployment', 'uyuni')];
      return db?.status?.updatedReplicas === 1 && db?.status?.availableReplicas === 1 && server?.status?.updatedReplicas === 1 && server?.status?.availableReplicas === 1;
    });
    expect(new Set(images(await get('deployment', 'uyuni')))).toEqual(new Set([PINNED.server]));
    expect(new Set(images(await get('deployment', 'db')))).toEqual(new Set([PINNED.db]));
  });

  it('plan then shows the next restore, not "no change": the last run\'s Jobs deleted, the server stopped again', async () => {
    const plan = await cli('plan', dist('restore'), { ...opts, detailedExitcode: true });
    expect(plan.code).toBe(2);
    expect(plan.out).toMatch(/Plan: 2 to create, 2 to update, 6 to delete, 2 to stop, \d+ unchanged/);
  });

  it('a second run is a new restore: it writes only the last run\'s Jobs deleted and made again and the stops and starts', async () => {
    const mark = auditSize(p.dir);
    const again = await cli('run', dist('restore'), { ...opts, yes: true });
    expect({ code: again.code, err: again.err }).toEqual({ code: 0, err: expect.any(String) });
    // The parent of the ApplySet the install and the restore share (both part-of uyuni, src/runtime/core/applyset.ts) names the
    // run that last applied members: the Deployments started again are, so it is written again.
    const applyset = /^patch configmaps\/uyuni-applyset 200$/;
    const sent = writes(p, mark, ns).filter((w) => !runOwn(w) && !applyset.test(w));
    const jobs = ['uyuni-restore-check', 'uyuni-restore-inspect-db', 'uyuni-stop-server', 'uyuni-stop-db', 'uyuni-restore-target', 'uyuni-restore'];
    expect([...sent].sort()).toEqual([
      ...jobs.map((j) => `delete jobs/${j} 200`), ...jobs.map((j) => `patch jobs/${j} 201`),
      'patch deployments/db 200', 'patch deployments/db 200', 'patch deployments/uyuni 200', 'patch deployments/uyuni 200',
    ].sort());
  });
});
