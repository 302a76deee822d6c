/**
 * The documented Role (docs/rbac/uyuni-cdk-operator.yaml) grants everything `run`'s pre-flight
 * asks the API server for (src/runtime/safety/permissions.ts), for every plan in dist/: the check the
 * cluster suite makes on kube-apiserver for install, upgrade, backup and restore
 * (test/cluster/rbac.test.ts), made here for all plans without a control plane. It failed before
 * the file held the ServiceAccounts, Roles and RoleBindings of the steps' Jobs.
 */
import * as fs from 'fs';
import * as path from 'path';
import { parseAllDocuments } from 'yaml';
import { loadKubeConfig } from '../../../src/kube/kubeconfig';
import { Cluster } from '../../../src/kube/cluster';
import { openPlanDir } from '../../../src/runtime/core/plan-dir';
import { neededPermissions, Permission, resourceName } from '../../../src/runtime/safety/permissions';
import { startSimulator, Simulator } from '../../sim';
import { ROOT } from './harness';

interface Rule { apiGroups: string[]; resources: string[]; verbs: string[] }
interface Doc { kind: string; metadata: { name: string }; rules?: Rule[] }

const docs = parseAllDocuments(fs.readFileSync(path.join(ROOT, 'docs', 'rbac', 'uyuni-cdk-operator.yaml'), 'utf8')).map((d) => d.toJS() as Doc);
const rulesOf = (name: string) => docs.find((d) => d.kind === 'ClusterRole' && d.metadata.name === name)!.rules!;
const grants = (rules: readonly Rule[], p: Permission) =>
  rules.some((r) => r.apiGroups.includes(p.group) && r.resources.includes(p.resource) && r.verbs.includes(p.verb));
const granted = (p: Permission) => grants(p.clusterScoped ? rulesOf('uyuni-cdk-operator-cluster') : rulesOf('uyuni-cdk-operator'), p);

const PLANS = fs.readdirSync(path.join(ROOT, 'dist')).filter((d) => fs.existsSync(path.join(ROOT, 'dist', d, 'uyuni.plan')));

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(async () => {
  await sim.stop();
});

describe('docs/rbac/uyuni-cdk-operator.yaml', () => {
  it('names the plans of dist/ it covers', () => {
    expect(PLANS.length).toBeGreaterThan(5);
    const header = fs.readFileSync(path.join(ROOT, 'docs', 'rbac', 'uyuni-cdk-operator.yaml'), 'utf8').split('\n').slice(0, 3).join(' ');
    for (const plan of PLANS) expect([plan, header.includes(plan)]).toEqual([plan, true]);
  });

  it.each(PLANS)('grants what run of dist/%s asks before its first write', async (name) => {
    const { plan, objectsOf } = openPlanDir(path.join(ROOT, 'dist', name));
    const needed = await neededPermissions(new Cluster(loadKubeConfig({ kubeconfig: sim.kubeconfigPath })), plan, objectsOf);
    expect(needed.length).toBeGreaterThan(5);
    expect(needed.filter((p) => !granted(p)).map((p) => `${p.verb} ${resourceName(p)} (${p.why})`)).toEqual([]);
  });

  it('would be found lacking without the steps\' accounts: a Role without serviceaccounts fails the check for dist/upgrade', async () => {
    const { plan, objectsOf } = openPlanDir(path.join(ROOT, 'dist', 'upgrade'));
    const needed = await neededPermissions(new Cluster(loadKubeConfig({ kubeconfig: sim.kubeconfigPath })), plan, objectsOf);
    const without = rulesOf('uyuni-cdk-operator').filter((r) => !r.resources.includes('serviceaccounts'));
    const namespaced = needed.filter((p) => !p.clusterScoped);
    expect(namespaced.filter((p) => !grants(without, p)).map((p) => `${p.verb} ${resourceName(p)}`)).toEqual(['get serviceaccounts', 'patch serviceaccounts']);
  });
});
