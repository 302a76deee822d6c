/**
 * The permissions docs/rbac/uyuni-cdk-operator.yaml documents, on kube-apiserver's RBAC: a user
 * (client certificate, CN = user, O = group) bound with exactly that file installs, upgrades,
 * upgrades, backs up, restores, reads the status and destroys; with one verb taken out, the
 * pre-flight names the missing permission before the first write (the audit log shows no write by
 * that user). Found here: the file held what dist/install needs and not the ServiceAccounts, Roles
 * and RoleBindings of upgrade's, backup's and restore's Jobs (run refused, naming six permissions);
 * RBAC lets the user create those Roles because it holds every permission they grant.
 */
import * as fs from 'fs';
import * as path from 'path';
import { parseAllDocuments } from 'yaml';
import { cli } from '../runtime/e2e/harness';
import { BACKUP_COPIED, BACKUP_INSPECTED, backupPruned, restoreChecked } from '../runtime/e2e/backup-facts';
import { inspectJobs } from '../runtime/e2e/inspect-facts';
import { plane } from './helpers';
import { auditEvents, auditSize, ROOT } from './plane/plane';
import { issue, kubeconfig } from './plane/pki';

const p = plane();
const RBAC = path.join(ROOT, 'docs', 'rbac', 'uyuni-cdk-operator.yaml');
const WRITES = ['create', 'update', 'patch', 'delete', 'deletecollection'];

interface Doc { kind: string; metadata: { name: string; namespace?: string }; rules?: Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }>; roleRef?: { name: string }; subjects?: Array<{ kind: string; name: string }> }

/** The documented file for namespace `ns`, its ClusterRole named after the namespace (the plane is shared), `edit` changing its rules. */
function documented(ns: string, edit: (rules: NonNullable<Doc['rules']>) => void = () => undefined): string {
  const docs = parseAllDocuments(fs.readFileSync(RBAC, 'utf8')).map((d) => d.toJS() as Doc);
  expect(docs.map((d) => d.kind)).toEqual(['Namespace', 'ClusterRole', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding']);
  for (const d of docs) {
    if (d.kind === 'Namespace') d.metadata.name = ns;
    if (d.kind === 'ClusterRole' && d.metadata.name === 'uyuni-cdk-operator') edit(d.rules!);
    if (d.kind.startsWith('Cluster')) d.metadata.name = `${d.metadata.name}-${ns}`;
    if (d.kind.endsWith('Binding')) d.roleRef!.name = `${d.roleRef!.name}-${ns}`;
    if (d.kind === 'RoleBinding') d.metadata.namespace = ns;
  }
  return docs.map((d) => JSON.stringify(d)).join('\n---\n');
}

/** A user of group uyuni-cdk-operators (the file's subject), with a kubeconfig of its own. */
function operator(name: string): string {
  const pki = path.join(p.dir, 'pki');
  const cert = issue(pki, `rbac-${name}`, `/O=uyuni-cdk-operators/CN=${name}`, 'clientAuth');
  return kubeconfig(path.join(pki, `rbac-${name}.kubeconfig`), p.state.server, path.join(pki, 'ca.crt'), name, cert);
}

function writesBy(user: string, mark: number): string[] {
  return auditEvents(p.dir, mark).filter((e) => e.user.username === user && WRITES.includes(e.verb) && !/[?&]dryRun=/.test(e.requestURI))
    .map((e) => `${e.verb} ${e.objectRef?.resource}/${e.objectRef?.name ?? ''} ${e.responseStatus?.code}`);
}

describe('one verb less than documented', () => {
  const ns = p.namespace('rbac-less');
  const user = `operator-${ns}`;

  afterAll(async () => {
    await p.kubectl(['delete', 'namespace', ns, '--wait=false']);
    await p.kubectl(['delete', 'clusterrolebinding', `uyuni-cdk-operator-cluster-${ns}`]);
    await p.kubectl(['delete', 'clusterrole', `uyuni-cdk-operator-${ns}`, `uyuni-cdk-operator-cluster-${ns}`]);
  });

  it('without patch on Deployments, run names it before any write: the user writes nothing, not even its lock', async () => {
    const kc = operator(user);
    const withoutPatch = documented(ns, (rules) => {
      const deployments = rules.find((r) => r.apiGroups.includes('apps') && r.resources.includes('deployments'))!;
      deployments.verbs = deployments.verbs.filter((v) => v !== 'patch');
    });
    expect((await p.kubectl(['apply', '--server-side', '-f', '-'], withoutPatch)).code).toBe(0);
    const mark = auditSize(p.dir);
    const r = await cli('run', path.join(ROOT, 'dist', 'install'), { kubeconfig: kc, namespace: ns, yes: true });
    expect(r.code).toBe(1);
    expect(r.out + r.err).toContain(`may not do this the run needs in namespace ${ns}:\n  - patch deployments.apps (Deployment/`);
    expect(r.out + r.err).toContain(`kubectl -n ${ns} auth can-i patch deployments.apps`);
    // what the user sent that the API server audits: only the access reviews (questions, nothing stored)
    const sent = auditEvents(p.dir, mark).filter((e) => e.user.username === user);
    expect(sent.length).toBeGreaterThan(10);
    expect(sent.filter((e) => e.objectRef?.resource !== 'selfsubjectaccessreviews')).toEqual([]);
    expect(writesBy(user, mark).filter((w) => !w.startsWith('create selfsubjectaccessreviews/'))).toEqual([]);
  }, 60_000);
});

describe('exactly the documented permissions', () => {
  const ns = p.namespace('rbac-doc');
  const user = `operator-${ns}`;
  let kc: string;
  const opts = () => ({ kubeconfig: kc, namespace: ns });
  const dist = (name: string) => path.join(ROOT, 'dist', name);

  beforeAll(async () => {
    kc = operator(user);
    expect((await p.kubectl(['apply', '--server-side', '-f', '-'], documented(ns))).code).toBe(0);
  });

  afterAll(async () => {
    await p.kubectl(['delete', 'namespace', ns, '--wait=false']);
    await p.kubectl(['delete', 'clusterrolebinding', `uyuni-cdk-operator-cluster-${ns}`]);
    await p.kubectl(['delete', 'clusterrole', `uyuni-cdk-operator-${ns}`, `uyuni-cdk-operator-cluster-${ns}`]);
  });

  it('install runs to an available server as that user, and plan then shows no change', async () => {
    const r = await cli('run', dist('install'), { ...opts(), yes: true });
    expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: expect.any(String) });
    const plan = await cli('plan', dist('install'), { ...opts(), detailedExitcode: true });
    expect({ code: plan.code, err: plan.err }).toEqual({ code: 0, err: expect.any(String) });
  }, 240_000);

  it('status reads every object of the plan as that user', async () => {
    const r = await cli('status', dist('install'), { ...opts(), output: 'json' });
    // exit 0: every step read and judged done (a read refused by RBAC would fail the verb)
    expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: '' });
    const status = JSON.parse(r.out) as { steps: Array<{ name: string; state: string }> };
    expect(status.steps.length).toBeGreaterThan(3);
    expect(status.steps.filter((s) => s.state !== 'done')).toEqual([]);
  });

  it('upgrade runs with its stops to done as that user', async () => {
    p.scenario({ jobs: inspectJobs() }, ns);
    // what the server being upgraded has and an install of this version does not (upgrade.test.ts)
    for (const claim of ['root', 'var-pgsql']) {
      const pvc = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: claim, namespace: ns },
        spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'standard', resources: { requests: { storage: '1Gi' } } } };
      expect((await p.kubectl(['create', '-f', '-'], JSON.stringify(pvc))).code).toBe(0);
    }
    const r = await cli('run', dist('upgrade'), { ...opts(), yes: true });
    expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: expect.any(String) });
    expect(r.out).toMatch(/scale to 0 Deployment\/db \([^)]*\): done/);
  }, 240_000);

  it('backup, then restore, run with their stops to done as that user', async () => {
    p.scenario({ jobs: { ...inspectJobs(), ...BACKUP_INSPECTED, ...BACKUP_COPIED, ...backupPruned(), ...restoreChecked({ target_empty: 'true' }) } }, ns);
    const backup = await cli('run', dist('backup'), { ...opts(), yes: true });
    expect({ code: backup.code, err: backup.err }).toEqual({ code: 0, err: expect.any(String) });
    expect(backup.out).toMatch(/gate passed: backup_ok is true/);
    const restore = await cli('run', dist('restore'), { ...opts(), yes: true });
    expect({ code: restore.code, err: restore.err }).toEqual({ code: 0, err: expect.any(String) });
    expect(restore.out).toMatch(/Run complete/);
  }, 240_000);

  it('destroy --yes deletes what the plan made as that user, the database last', async () => {
    const r = await cli('destroy', dist('install'), { ...opts(), yes: true });
    expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: expect.any(String) });
    expect(r.out).toMatch(/deleted {7}Deployment\/db/);
    expect((await p.kubectl(['-n', ns, 'get', 'deployment', 'uyuni'])).code).not.toBe(0);
  }, 240_000);
});
