/**
 * Step files as the runtime reads them, always from the plan directory (no cache elsewhere): `run`
 * parses and checks every one (`openPlanDir`); `status` takes the index's objects and the Jobs'
 * spec hashes of `fileSummary` when the file's digest is the one recorded, else parses and checks
 * it the same way (`openPlanView`). And what synth writes into dist/ is what parsing gives.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { PLAN_INDEX, PlanError, readPlan } from '../../../src/plan/reader';
import { hashText } from '../../../src/plan/spec-hash';
import type { Step } from '../../../src/plan/types';
import { BadInput } from '../../../src/kube/api-errors';
import { loadStepObjects, refOf, specHash } from '../../../src/runtime/core/manifests';
import { openPlanDir, openPlanView } from '../../../src/runtime/core/plan-dir';
import { job, namespace, NS, service, writePlan } from '../plans';

const ROOT = path.join(__dirname, '..', '..', '..');
const steps = () => [
  { name: 'namespace', objects: [namespace()] },
  { name: 'setup', objects: [job('setup'), service('uyuni')] },
];
const indexOf = (dir: string) => JSON.parse(fs.readFileSync(path.join(dir, PLAN_INDEX), 'utf8'));
const setIndex = (dir: string, index: unknown) => fs.writeFileSync(path.join(dir, PLAN_INDEX), JSON.stringify(index));

describe('dist/: the summaries synth writes', () => {
  const plans = fs.readdirSync(path.join(ROOT, 'dist')).filter((p) => fs.existsSync(path.join(ROOT, 'dist', p, PLAN_INDEX)));

  it.each(plans)('%s: every step has the digest of its file and the spec hash of each of its Jobs, as parsing the file gives', (name) => {
    const dir = path.join(ROOT, 'dist', name);
    const plan = readPlan(dir);
    for (const step of plan.steps) {
      expect(step.fileSummary?.sha256).toBe(hashText(fs.readFileSync(path.join(dir, step.file), 'utf8')));
      const jobs = loadStepObjects(dir, step).filter((o) => o.kind === 'Job');
      expect(step.fileSummary?.jobSpecHashes).toEqual(Object.fromEntries(jobs.map((j) => [j.metadata.name, specHash(j)])));
    }
  });

  it('the plans with Jobs have their hashes (not only empty maps)', () => {
    const hashes = ['migrate', 'upgrade'].flatMap((p) => readPlan(path.join(ROOT, 'dist', p)).steps.flatMap((s) => Object.values(s.fileSummary?.jobSpecHashes ?? {})));
    expect(hashes.length).toBeGreaterThan(0);
    for (const h of hashes) expect(h).toMatch(/^sha256:[0-9a-f]{64}$/);
  });
});

describe('openPlanView (status) beside openPlanDir (run, plan, destroy)', () => {
  it('takes the index for a step file whose digest is recorded: the file is read but not parsed', () => {
    const dir = writePlan(steps(), { summaries: true });
    const index = indexOf(dir);
    // A file that does not parse, its digest recorded: only a parse would notice.
    const text = 'kind: [unclosed\n';
    fs.writeFileSync(path.join(dir, index.steps[1].file), text);
    index.steps[1].fileSummary.sha256 = hashText(text);
    setIndex(dir, index);
    const view = openPlanView(dir).viewOf('setup');
    expect(view.objects).toEqual(index.steps[1].objects);
    expect([...view.jobSpecHashes.keys()]).toEqual(['setup']);
    expect(() => openPlanDir(dir)).toThrow(BadInput);
  });

  it('parses and checks a step file edited since synth, as run does', () => {
    const dir = writePlan(steps(), { summaries: true });
    const file = path.join(dir, indexOf(dir).steps[1].file);
    const extra = 'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: evil}\n';
    fs.appendFileSync(file, `---\n${extra}`);
    for (const open of [openPlanView, openPlanDir]) {
      expect(() => open(dir)).toThrow(/holds ClusterRoleBinding\/evil \(rbac\.authorization\.k8s\.io\/v1\), which steps\[1\] \(setup\)\.objects does not list/);
    }
  });

  it('a Job edited since synth: its spec hash is the file\'s, not the summary\'s', () => {
    const dir = writePlan(steps(), { summaries: true });
    const recorded = indexOf(dir).steps[1].fileSummary.jobSpecHashes.setup;
    const file = path.join(dir, indexOf(dir).steps[1].file);
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(/uyuni-cdk\.io\/spec-hash: .*\n/, ''));
    const edited = loadStepObjects(dir, readPlan(dir).steps[1]).find((o) => o.kind === 'Job')!;
    expect(openPlanView(dir).viewOf('setup').jobSpecHashes.get('setup')).toBe(specHash(edited));
    expect(specHash(edited)).not.toBe(recorded);
  });

  it('gives the same view from the summaries as from parsing, --namespace included', () => {
    const summarized = writePlan(steps(), { summaries: true });
    const handWritten = writePlan(steps());
    for (const ns of [undefined, 'elsewhere']) {
      for (const step of ['namespace', 'setup']) {
        const a = openPlanView(summarized, ns).viewOf(step);
        const b = openPlanView(handWritten, ns).viewOf(step);
        expect(a.objects.map((r) => ({ ...r }))).toEqual(b.objects.map((r) => JSON.parse(JSON.stringify(r))));
        expect([...a.jobSpecHashes]).toEqual([...b.jobSpecHashes]);
      }
    }
    expect(openPlanView(summarized, 'elsewhere').viewOf('setup').objects.map((r) => r.namespace)).toEqual(['elsewhere', 'elsewhere']);
  });

  it('reads the step files from the plan directory with the checks of every read (a symbolic link is refused)', () => {
    const dir = writePlan(steps(), { summaries: true });
    const file = path.join(dir, indexOf(dir).steps[1].file);
    const outside = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'uyuni-outside-')), 'x.yaml');
    fs.renameSync(file, outside);
    fs.symlinkSync(outside, file);
    expect(() => openPlanView(dir)).toThrow(/is a symbolic link/);
  });
});

describe('fileSummary in uyuni.plan', () => {
  const mutated = (fn: (index: any) => void) => {
    const dir = writePlan(steps(), { summaries: true });
    const index = indexOf(dir);
    fn(index);
    setIndex(dir, index);
    return dir;
  };

  it.each([
    ['a digest in another form', (p: any) => { p.steps[0].fileSummary.sha256 = 'md5:00'; }, /steps\[0\] \(namespace\)\.fileSummary\.sha256 "md5:00" must be "sha256:" and 64 hex digits/],
    ['a hash for a Job the step does not have', (p: any) => { p.steps[0].fileSummary.jobSpecHashes.other = `sha256:${'0'.repeat(64)}`; },
      /steps\[0\] \(namespace\)\.fileSummary\.jobSpecHashes names other, which is not a Job of the step's objects/],
    ['no hash for a Job of the step', (p: any) => { p.steps[1].fileSummary.jobSpecHashes = {}; }, /steps\[1\] \(setup\)\.fileSummary\.jobSpecHashes has no spec hash for Job setup/],
    ['a hash that is not one', (p: any) => { p.steps[1].fileSummary.jobSpecHashes.setup = 'x'; }, /fileSummary\.jobSpecHashes\.setup "x" must be/],
    ['a summary without its digest', (p: any) => { delete p.steps[1].fileSummary.sha256; }, /steps\[1\] \(setup\)\.fileSummary\.sha256 is required/],
  ])('refuses %s, naming the field', (_what, fn, message) => {
    const dir = mutated(fn);
    expect(() => readPlan(dir)).toThrow(PlanError);
    expect(() => readPlan(dir)).toThrow(message);
  });

  it('is optional: a plan without summaries (hand-written, or of an older synth) is read', () => {
    const dir = writePlan(steps());
    expect(readPlan(dir).steps.every((s) => s.fileSummary === undefined)).toBe(true);
    expect(openPlanView(dir).viewOf('setup').objects.map((r) => `${r.kind}/${r.name}`)).toEqual(['Job/setup', 'Service/uyuni']);
  });
});

describe('loadStepObjects', () => {
  const step = { name: 'config', file: '0000-config.k8s.yaml' } as Step;
  let work: string;
  beforeEach(() => { work = fs.mkdtempSync(path.join(os.tmpdir(), 'uyuni-step-files-')); });
  afterEach(() => fs.rmSync(work, { recursive: true, force: true }));
  const write = (text: string) => fs.writeFileSync(path.join(work, step.file), text);

  it('gives the objects in file order, leaving empty documents out', () => {
    write(`apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: ${NS}}\n---\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: ${NS}}\n`);
    expect(loadStepObjects(work, step).map((o) => refOf(o).name)).toEqual(['a', 'b']);
  });

  it('refuses bad YAML, a document that is not a manifest, and too many aliases, naming the file', () => {
    write('apiVersion: v1\nkind: [unclosed\n');
    expect(() => loadStepObjects(work, step)).toThrow(BadInput);
    write('apiVersion: v1\nkind: ConfigMap\n');
    expect(() => loadStepObjects(work, step)).toThrow(/0000-config\.k8s\.yaml: every document needs apiVersion, kind and metadata\.name/);
    const letter = (i: number) => String.fromCharCode(97 + i);
    const laughs = ['a: &a [x, x, x, x, x, x, x, x, x, x]', ...Array.from({ length: 12 }, (_, i) => `${letter(i + 1)}: &${letter(i + 1)} [${Array(10).fill(`*${letter(i)}`).join(', ')}]`)];
    write(`apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\ndata:\n${laughs.map((l) => `  ${l}`).join('\n')}\n`);
    expect(() => loadStepObjects(work, step)).toThrow(/alias/i);
  });
});
