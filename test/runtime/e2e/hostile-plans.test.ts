/**
 * Hostile plan directories (issue "Reliability under hostile input", items 2 and 7): every verb
 * validates the whole plan directory before it sends anything, exits 2 naming the field or file,
 * and opens nothing outside the plan directory.
 */
import * as fs from 'fs';
import * as path from 'path';
import { stringify } from 'yaml';
import { startSimulator, Simulator } from '../../sim';
import { cli, spawnCli, tmpDir } from './harness';
import { job, namespace, NS, writePlan } from '../plans';

let sim: Simulator;
afterEach(async () => {
  await sim?.stop();
});

type Verb = 'run' | 'plan' | 'status' | 'destroy';
const VERBS: Verb[] = ['run', 'plan', 'status', 'destroy'];

/** A small valid plan (namespace, setup Job) in a fresh directory `<root>/plan`, beside `<root>/outside`. */
function basePlan(): { root: string; dir: string; outside: string } {
  const root = tmpDir('uyuni-hostile-');
  const dir = path.join(root, 'plan');
  const outside = path.join(root, 'outside');
  fs.mkdirSync(outside);
  writePlan([{ name: 'namespace', objects: [namespace()] }, { name: 'setup', objects: [job('setup')] }], { dir });
  return { root, dir, outside };
}

const planFile = (dir: string) => path.join(dir, 'uyuni.plan');
const readIndex = (dir: string) => JSON.parse(fs.readFileSync(planFile(dir), 'utf8'));
const writeIndex = (dir: string, p: unknown) => fs.writeFileSync(planFile(dir), JSON.stringify(p, null, 2));
function editIndex(dir: string, fn: (p: any) => void): void {
  const p = readIndex(dir);
  fn(p);
  writeIndex(dir, p);
}

const clusterAdmin = {
  apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'evil' },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
  subjects: [{ kind: 'ServiceAccount', name: 'default', namespace: NS }],
};
const refOf = (o: any) => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}) });

interface Case {
  readonly what: string;
  /** Makes the plan hostile; returns nothing. */
  readonly make: (p: { root: string; dir: string; outside: string }) => void;
  /** What stderr must say (the field or file named). */
  readonly error: RegExp;
}

const CASES: Case[] = [
  {
    what: 'a step file ../../outside/evil.yaml',
    make: ({ dir, outside }) => {
      fs.writeFileSync(path.join(outside, 'evil.yaml'), stringify(clusterAdmin));
      editIndex(dir, (p) => { p.steps[0].file = '../outside/evil.yaml'; p.steps[0].objects = [refOf(clusterAdmin)]; p.steps[0].waits = []; });
    },
    error: /steps\[0\] \(namespace\)\.file "\.\.\/outside\/evil\.yaml" must be a plain file name/,
  },
  {
    what: 'a step file ../../etc/passwd',
    make: ({ dir }) => editIndex(dir, (p) => { p.steps[0].file = '../../../../../../../../etc/passwd'; }),
    error: /steps\[0\] \(namespace\)\.file ".*etc\/passwd" must be a plain file name/,
  },
  {
    what: 'a step file symlinked outside the plan',
    make: ({ dir, outside }) => {
      const file = readIndex(dir).steps[0].file as string;
      fs.writeFileSync(path.join(outside, 'evil.yaml'), fs.readFileSync(path.join(dir, file)));
      fs.rmSync(path.join(dir, file));
      fs.symlinkSync(path.join(outside, 'evil.yaml'), path.join(dir, file));
    },
    error: /0000-namespace\.k8s\.yaml is a symbolic link/,
  },
  {
    what: 'a step file in a subdirectory symlinked outside the plan',
    make: ({ dir, outside }) => {
      fs.copyFileSync(path.join(dir, readIndex(dir).steps[0].file), path.join(outside, 'ns.yaml'));
      fs.symlinkSync(outside, path.join(dir, 'sub'));
      editIndex(dir, (p) => { p.steps[0].file = 'sub/ns.yaml'; });
    },
    error: /steps\[0\] \(namespace\)\.file "sub\/ns\.yaml" must be a plain file name/,
  },
  {
    what: 'a step file symlinked to /dev/zero',
    make: ({ dir }) => {
      const file = readIndex(dir).steps[0].file as string;
      fs.rmSync(path.join(dir, file));
      fs.symlinkSync('/dev/zero', path.join(dir, file));
    },
    error: /0000-namespace\.k8s\.yaml is a symbolic link/,
  },
  {
    what: 'a step file that is a directory',
    make: ({ dir }) => {
      const file = readIndex(dir).steps[0].file as string;
      fs.rmSync(path.join(dir, file));
      fs.mkdirSync(path.join(dir, file));
    },
    error: /0000-namespace\.k8s\.yaml is not a regular file/,
  },
  {
    what: 'a step file over 16 MiB',
    make: ({ dir }) => {
      const file = path.join(dir, readIndex(dir).steps[0].file as string);
      fs.appendFileSync(file, `\n# ${'x'.repeat(17 * 1024 * 1024)}\n`);
    },
    error: /0000-namespace\.k8s\.yaml is larger than 16 MiB/,
  },
  {
    what: 'uyuni.plan over 4 MiB',
    make: ({ dir }) => editIndex(dir, (p) => { p.padding = 'x'.repeat(5 * 1024 * 1024); }),
    error: /uyuni\.plan is larger than 4 MiB/,
  },
  {
    what: 'uyuni.plan symlinked outside the plan',
    make: ({ dir, outside }) => {
      fs.renameSync(planFile(dir), path.join(outside, 'uyuni.plan'));
      fs.symlinkSync(path.join(outside, 'uyuni.plan'), planFile(dir));
    },
    error: /uyuni\.plan is a symbolic link/,
  },
  {
    what: 'an object in a step file that uyuni.plan does not list (ClusterRoleBinding to cluster-admin)',
    make: ({ dir }) => fs.appendFileSync(path.join(dir, readIndex(dir).steps[0].file), `---\n${stringify(clusterAdmin)}`),
    error: /0000-namespace\.k8s\.yaml holds ClusterRoleBinding\/evil \(rbac\.authorization\.k8s\.io\/v1\), which steps\[0\] \(namespace\)\.objects does not list/,
  },
  {
    what: 'an object uyuni.plan lists that the step file does not hold',
    make: ({ dir }) => editIndex(dir, (p) => { p.steps[1].objects.push({ apiVersion: 'v1', kind: 'ConfigMap', name: 'ghost', namespace: NS }); }),
    error: /steps\[1\] \(setup\)\.objects\[1\] ConfigMap\/ghost \(uyuni-test\) is not in 0001-setup\.k8s\.yaml/,
  },
  {
    what: 'a ClusterRoleBinding listed in uyuni.plan and the step file',
    make: ({ dir }) => {
      fs.appendFileSync(path.join(dir, readIndex(dir).steps[0].file), `---\n${stringify(clusterAdmin)}`);
      editIndex(dir, (p) => { p.steps[0].objects.push(refOf(clusterAdmin)); });
    },
    error: /steps\[0\] \(namespace\)\.objects\[1\] ClusterRoleBinding\/evil: a cluster-scoped object other than the plan's Namespace/,
  },
  {
    what: 'an object in kube-system inside a plan for another namespace',
    make: ({ dir }) => {
      const evil = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'coredns', namespace: 'kube-system' }, data: { Corefile: 'x' } };
      fs.appendFileSync(path.join(dir, readIndex(dir).steps[1].file), `---\n${stringify(evil)}`);
      editIndex(dir, (p) => { p.steps[1].objects.push(refOf(evil)); });
    },
    error: /steps\[1\] \(setup\)\.objects\[1\] ConfigMap\/coredns \(kube-system\) is not in the plan's namespace uyuni-test/,
  },
  {
    what: 'a plan name with ../',
    make: ({ dir }) => editIndex(dir, (p) => { p.name = '../../escape'; }),
    error: /uyuni\.plan: name "\.\.\/\.\.\/escape" must be a DNS label/,
  },
  {
    what: 'a step name with ../',
    make: ({ dir }) => editIndex(dir, (p) => { p.steps[1].name = '../../escape'; }),
    error: /uyuni\.plan: steps\[1\] \(\.\.\/\.\.\/escape\)\.name "\.\.\/\.\.\/escape" must be a DNS label/,
  },
  {
    what: 'selector {}',
    make: ({ dir }) => editIndex(dir, (p) => { p.selector = {}; }),
    error: /uyuni\.plan: selector must name app\.kubernetes\.io\/managed-by: uyuni-cdk/,
  },
  {
    what: 'a selector without managed-by',
    make: ({ dir }) => editIndex(dir, (p) => { p.selector = { 'app.kubernetes.io/part-of': 'uyuni' }; }),
    error: /uyuni\.plan: selector must name app\.kubernetes\.io\/managed-by: uyuni-cdk/,
  },
  {
    what: 'a selector key that widens the label selector',
    make: ({ dir }) => editIndex(dir, (p) => { p.selector = { ...p.selector, '!x,a': 'b' }; }),
    error: /uyuni\.plan: selector key "!x,a" is not a label key/,
  },
  {
    what: 'a delete action in kube-system',
    make: ({ dir }) => editIndex(dir, (p) => { p.steps[1].actions = [{ type: 'delete', object: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'coredns', namespace: 'kube-system' } }]; }),
    error: /steps\[1\] \(setup\)\.actions\[0\]\.object Deployment\/coredns \(kube-system\) is not in the plan's namespace/,
  },
  {
    what: 'a requirement in kube-system',
    make: ({ dir }) => editIndex(dir, (p) => { p.steps[1].requires = [{ kind: 'Secret', name: 's', namespace: 'kube-system', keys: ['a'], ifMissing: 'generate' }]; }),
    error: /steps\[1\] \(setup\)\.requires\[0\]\.namespace "kube-system" is not the plan's namespace/,
  },
];

/** Every entry under a directory, not following symbolic links, reading nothing. */
function listUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? listUnder(p) : [p];
  });
}

interface Outcome { code: number; requests: number; err: string; escaped: string[] }

async function attempt(verb: Verb, c: Case): Promise<Outcome> {
  const p = basePlan();
  c.make(p);
  const runDir = path.join(p.root, 'runs', 'r1');
  const before = sim.requests.length;
  let code: number;
  let err: string;
  if (c.what.includes('/dev/zero')) {
    // Before the fix this hung (and grew without bound): a child process, killed after 10 s.
    const { child, done } = spawnCli([verb, p.dir, '--kubeconfig', sim.kubeconfigPath, ...(verb === 'run' ? ['--run-dir', runDir] : [])]);
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    const r = await done;
    clearTimeout(timer);
    code = r.code;
    err = r.err;
  } else {
    const r = await cli(verb, p.dir, { kubeconfig: sim.kubeconfigPath, ...(verb === 'run' ? { runDir } : {}) });
    code = r.code;
    err = r.err;
  }
  const reqs = sim.requests.slice(before);
  const escaped = listUnder(p.root).map((f) => path.relative(p.root, f)).filter((f) => !f.startsWith('plan') && !f.startsWith('outside') && !f.startsWith(path.join('runs', 'r1')));
  return { code, requests: reqs.length, err, escaped };
}

describe('hostile plan directories: refused before any request (exit 2)', () => {
  beforeEach(async () => {
    sim = await startSimulator();
  });

  for (const c of CASES) {
    it.each(VERBS)(`${c.what}: %s`, async (verb) => {
      const o = await attempt(verb, c);
      expect(o.err).toMatch(c.error);
      expect(o.err).not.toMatch(/\n\s+at /);
      expect(o.code).toBe(2);
      expect(o.requests).toBe(0);
      expect(o.escaped).toEqual([]);
    }, 30_000);
  }

  it('still runs the unmodified plan (the checks refuse nothing synth writes)', async () => {
    const { dir, root } = basePlan();
    const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath, runDir: path.join(root, 'runs', 'ok') });
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
  });
});
