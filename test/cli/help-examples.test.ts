/**
 * Every example of every verb's `--help` runs (issue 28): each line of each `Examples:` block is
 * run as a user would type it, by bash, with `uyuni-cdk` on PATH (the sources,
 * test/helpers/entry.ts), in a project directory holding the committed plans in dist/, HOME and
 * XDG_STATE_HOME in temp directories and KUBECONFIG pointing at the API simulator. Each must exit
 * with the code its session expects and print no usage error. An example in a help text that no
 * session runs, or a session line that is no longer an example, fails the test: no example can
 * go stale.
 */
import { spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import YAML from 'yaml';
import { EXIT } from '../../src/plan/exit-codes';
import { readPlan } from '../../src/plan/reader';
import { LOCK_ANNOTATIONS } from '../../src/runtime/safety/lock';
import { tempDir } from '../helpers/synth';
import { BIN, cli, ROOT } from '../runtime/e2e/harness';
import { inspectJobs, putClaims } from '../runtime/e2e/inspect-facts';
import { startSimulator, Simulator } from '../sim';

/** Every verb with a help of its own, as typed after `uyuni-cdk`. */
const VERBS = [
  'init', 'synth', 'run', 'plan', 'status', 'destroy', 'logs', 'support', 'unlock', 'repair-record', 'completion',
  'agent', 'agent render', 'agent cleanup', 'agent run',
] as const;

const helpOf = (verb: string) => {
  const r = spawnSync(process.execPath, [BIN, ...verb.split(' '), '--help'], { encoding: 'utf8' });
  expect([verb, r.status, r.stderr]).toEqual([verb, 0, '']);
  return r.stdout;
};
const HELP = Object.fromEntries(VERBS.map((v) => [v, helpOf(v)])) as Record<(typeof VERBS)[number], string>;

/** The lines of a help's `Examples:` (or `Example:`) block: indented by two, up to the first blank line. */
export function examplesOf(help: string): string[] {
  const lines = help.split('\n');
  const at = lines.findIndex((l) => /^Examples?:$/.test(l));
  if (at < 0) return [];
  const out: string[] = [];
  for (const l of lines.slice(at + 1)) {
    if (!l.startsWith('  ')) break;
    out.push(l.trim());
  }
  return out;
}

/** Where the examples run: a user's project and home, `uyuni-cdk` on PATH. */
interface Place {
  readonly cwd: string;
  readonly home: string;
  readonly env: NodeJS.ProcessEnv;
}

function place(kubeconfig?: string): Place {
  const cwd = tempDir('uyuni-examples-');
  const home = tempDir('uyuni-examples-home-');
  const binDir = tempDir('uyuni-examples-bin-');
  fs.writeFileSync(path.join(binDir, 'uyuni-cdk'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@"\n`, { mode: 0o755 });
  const env: NodeJS.ProcessEnv = {
    ...process.env, PATH: `${binDir}${path.delimiter}${process.env.PATH}`, HOME: home, XDG_STATE_HOME: path.join(home, '.local', 'state'),
    ...(kubeconfig ? { KUBECONFIG: kubeconfig } : {}),
  };
  delete env.UYUNI_CONFIG;
  delete env.UYUNI_DIST;
  return { cwd, home, env };
}

/** A project with the committed plans, for the cluster verbs. */
function project(sim: Simulator): Place {
  const p = place(sim.kubeconfigPath);
  fs.cpSync(path.join(ROOT, 'dist'), path.join(p.cwd, 'dist'), { recursive: true });
  return p;
}

interface Result { code: number; out: string; err: string }

/** Runs one example line with bash, as typed; `interruptOn`: once its output shows that, Ctrl-C (SIGINT), as a user stops a `-f`. */
function runLine(line: string, where: Place, interruptOn?: RegExp): Promise<Result> {
  const child = spawn('bash', ['-c', line], { cwd: where.cwd, env: where.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  let err = '';
  let interrupted = false;
  child.stdout.on('data', (d) => {
    out += d;
    if (interruptOn && !interrupted && interruptOn.test(out)) {
      interrupted = true;
      process.kill(-child.pid!, 'SIGINT');
    }
  });
  child.stderr.on('data', (d) => { err += d; });
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 128 : -1), out, err })));
}

/** One example in its session: the exit code it must end with, and what else to check. */
interface Step {
  readonly line: string;
  readonly code: number;
  /** Followed output: Ctrl-C once it shows this. */
  readonly interruptOn?: RegExp;
  /** Before the line: what the user has at this point that no earlier example made. */
  readonly before?: (where: Place, sim?: Simulator) => void | Promise<void>;
  readonly check?: (r: Result, where: Place, sim?: Simulator) => void;
}

/** commander's usage errors, and our own "bad arguments" lines. */
const USAGE = /error: (unknown option|unknown command|missing required|too many arguments|option '.*' argument|required option)/;

async function runSession(steps: readonly Step[], where: Place, sim?: Simulator): Promise<void> {
  for (const s of steps) {
    await s.before?.(where, sim);
    const r = await runLine(s.line, where, s.interruptOn);
    expect({ line: s.line, code: r.code, usage: USAGE.test(r.err) }).toEqual({ line: s.line, code: s.code, usage: false });
    s.check?.(r, where, sim);
  }
}

const jsonLines = (text: string) => text.split('\n').filter(Boolean).map((l) => JSON.parse(l));
const exists = (where: Place, file: string) => fs.existsSync(path.join(where.cwd, file));

/** Without a cluster: a starting configuration written, then synthesized. */
const FILES: readonly Step[] = [
  { line: 'uyuni-cdk init                           # ./uyuni.yaml, an install', code: EXIT.ok, check: (_r, w) => expect(exists(w, 'uyuni.yaml')).toBe(true) },
  { line: 'uyuni-cdk init --migration -o migration.yaml', code: EXIT.ok, check: (_r, w) => expect(exists(w, 'migration.yaml')).toBe(true) },
  { line: 'uyuni-cdk init --proxy -o -              # print it', code: EXIT.ok, check: (r) => expect(r.out).toMatch(/^proxy:/m) },
  { line: 'uyuni-cdk synth                                  # uyuni.yaml → dist/<plan>/', code: EXIT.ok, check: (_r, w) => expect(exists(w, 'dist/install/uyuni.plan')).toBe(true) },
  {
    line: 'uyuni-cdk synth -c migration.yaml -o migration-dist   # another configuration, its own directory',
    code: EXIT.ok,
    check: (_r, w) => expect([exists(w, 'migration-dist/migrate/uyuni.plan'), exists(w, 'dist/install/uyuni.plan')]).toEqual([true, true]),
  },
  {
    line: 'uyuni-cdk synth -c uyuni.yaml -c migration.yaml --set \'images.tag="2026.10"\' -o layered   # layers, later wins',
    code: EXIT.ok,
    // The migration's plan (the later file), every server image at the --set's tag, kept a string.
    check: (_r, w) => {
      expect(exists(w, 'layered/migrate/uyuni.plan')).toBe(true);
      const images = fs.readdirSync(path.join(w.cwd, 'layered', 'migrate')).filter((f) => f.endsWith('.yaml'))
        .flatMap((f) => [...fs.readFileSync(path.join(w.cwd, 'layered', 'migrate', f), 'utf8').matchAll(/image: (\S+)/g)].map((m) => m[1]))
        .filter((i) => /\/server:/.test(i));
      expect(images.length).toBeGreaterThan(0);
      expect(images.every((i) => i.endsWith(':2026.10'))).toBe(true);
    },
  },
];

/** The shell's completion, installed as each help says. */
const COMPLETION: readonly Step[] = [
  { line: 'source <(uyuni-cdk completion bash)                   # in ~/.bashrc', code: EXIT.ok, check: (r) => expect(r.err).toBe('') },
  {
    line: 'mkdir -p ~/.zfunc && uyuni-cdk completion zsh > ~/.zfunc/_uyuni-cdk   # with fpath+=(~/.zfunc) in ~/.zshrc',
    code: EXIT.ok,
    check: (_r, w) => expect(fs.readFileSync(path.join(w.home, '.zfunc', '_uyuni-cdk'), 'utf8')).toMatch(/^#compdef uyuni-cdk/),
  },
  {
    line: 'uyuni-cdk completion fish > ~/.config/fish/completions/uyuni-cdk.fish',
    code: EXIT.ok,
    // fish makes its completions directory itself
    before: (w) => { fs.mkdirSync(path.join(w.home, '.config', 'fish', 'completions'), { recursive: true }); },
    check: (_r, w) => expect(fs.readFileSync(path.join(w.home, '.config', 'fish', 'completions', 'uyuni-cdk.fish'), 'utf8')).toContain('complete -c uyuni-cdk'),
  },
  {
    line: 'uyuni-cdk agent render -f dist/node-services/0000-pods.k8s.yaml --out units   # the units of the plan\'s pods',
    code: EXIT.ok,
    before: (w) => { fs.cpSync(path.join(ROOT, 'dist', 'node-services'), path.join(w.cwd, 'dist', 'node-services'), { recursive: true }); },
    check: (_r, w) => {
      const units = fs.readdirSync(path.join(w.cwd, 'units'));
      expect(units.length).toBeGreaterThan(0);
      // as synth rendered them into dist/node-services/systemd/, but for the kubeconfig: this user's
      const unit = (f: string) => fs.readFileSync(f, 'utf8').replace(/^Environment="KUBECONFIG=.*"$/m, '');
      expect(units).toEqual(fs.readdirSync(path.join(ROOT, 'dist', 'node-services', 'systemd')));
      for (const u of units) expect(unit(path.join(w.cwd, 'units', u))).toBe(unit(path.join(ROOT, 'dist', 'node-services', 'systemd', u)));
      expect(fs.readFileSync(path.join(w.cwd, 'units', units[0]), 'utf8')).toContain(`KUBECONFIG=${w.home}/.kube/config`);
    },
  },
];

/** A kubeconfig at ~/.kube/uyuni whose context `prod` is the simulator's. */
function prodKubeconfig(where: Place, sim: Simulator): void {
  const kc = YAML.parse(fs.readFileSync(sim.kubeconfigPath, 'utf8'));
  for (const c of kc.contexts) c.name = 'prod';
  kc['current-context'] = 'none';
  fs.mkdirSync(path.join(where.home, '.kube'), { recursive: true });
  fs.writeFileSync(path.join(where.home, '.kube', 'uyuni'), YAML.stringify(kc));
}

/** A lock left behind by a run that died (src/runtime/safety/lock.ts writes it so). */
function staleLock(sim: Simulator, runId: string): void {
  const a = LOCK_ANNOTATIONS;
  sim.put({
    apiVersion: 'coordination.k8s.io/v1', kind: 'Lease',
    metadata: {
      name: 'uyuni-cdk-lock', namespace: 'uyuni',
      annotations: { [a.run]: runId, [a.user]: 'admin', [a.host]: 'elsewhere', [a.pid]: '1', [a.plan]: 'install', [a.verb]: 'run', [a.started]: new Date().toISOString() },
    },
    spec: { holderIdentity: runId, leaseDurationSeconds: 3600, acquireTime: new Date().toISOString(), renewTime: new Date().toISOString() },
  });
}

/** An install's life on one cluster: plan, run, watch, logs, support, plan the upgrade, repair a record, destroy, unlock. */
const INSTALL: readonly Step[] = [
  { line: 'uyuni-cdk plan dist/install', code: EXIT.ok, check: (r) => expect(r.out).toMatch(/^Plan: \d+ to create/m) },
  { line: 'uyuni-cdk plan dist/install --detailed-exitcode   # CI drift check: 0 none, 2 changes, 1 an error', code: EXIT.planChanges },
  {
    line: 'uyuni-cdk run dist/install',
    code: EXIT.ok,
    check: (r, w, sim) => {
      expect(r.out).toContain('run install-');
      expect(sim!.get('apps/v1', 'Deployment', 'uyuni', 'uyuni')?.status?.readyReplicas).toBe(1);
      // its logs and events: the first attempt of a new run series in the user's state directory
      expect(fs.readdirSync(path.join(w.home, '.local', 'state', 'uyuni-cdk', 'uyuni', 'install'))).toHaveLength(1);
    },
  },
  {
    line: 'uyuni-cdk run dist/install --kubeconfig ~/.kube/uyuni --context prod --output json',
    code: EXIT.ok,
    before: (w, sim) => prodKubeconfig(w, sim!),
    check: (r) => expect(jsonLines(r.out).pop()).toMatchObject({ type: 'run-done', status: 'done' }),
  },
  { line: 'uyuni-cdk status dist/install', code: EXIT.ok },
  { line: 'while uyuni-cdk status dist/install >/dev/null; [ $? = 4 ]; do sleep 60; done   # wait while not finished', code: EXIT.ok },
  {
    line: 'uyuni-cdk status dist/install --namespace uyuni-test --output json   # exit 4: nothing there yet',
    code: EXIT.incomplete,
    check: (r) => expect(JSON.parse(r.out)).toMatchObject({ plan: 'install', namespace: 'uyuni-test' }),
  },
  { line: 'uyuni-cdk logs dist/install server -f         # the server\'s first start, as it sets itself up', code: EXIT.ok, interruptOn: /^\[uyuni-[^\]]*\] uyuni: setting the server up$/m },
  { line: 'uyuni-cdk logs dist/install database --tail 50', code: EXIT.ok, check: (r) => expect(r.out).toContain('[db-') },
  { line: 'uyuni-cdk logs dist/install                   # every running service of the plan', code: EXIT.ok, check: (r) => expect(r.out).toContain('[uyuni-') },
  {
    line: 'uyuni-cdk support dist/install                # ./uyuni-support-install-<time>.tar.gz',
    code: EXIT.ok,
    check: (_r, w) => expect(fs.readdirSync(w.cwd).filter((f) => /^uyuni-support-install-.*\.tar\.gz$/.test(f))).toHaveLength(1),
  },
  { line: 'uyuni-cdk support dist/migrate -o migration-failure.tar.gz --no-exec', code: EXIT.ok, check: (_r, w) => expect(exists(w, 'migration-failure.tar.gz')).toBe(true) },
  { line: 'uyuni-cdk plan dist/upgrade --output json', code: EXIT.ok, check: (r) => expect(JSON.parse(r.out)).toMatchObject({ plan: 'upgrade' }) },
  { line: 'uyuni-cdk repair-record dist/migrate          # shows, then asks', code: EXIT.ok, check: (r) => expect(r.out).toContain('nothing to repair') },
  {
    line: 'uyuni-cdk repair-record dist/install --yes',
    code: EXIT.ok,
    before: (_w, sim) => {
      const cm = sim!.get('v1', 'ConfigMap', 'uyuni-cdk-history', 'uyuni');
      sim!.put({ ...cm, data: { ...cm.data, identity: '{"fqdn": "uyuni.exa' } });
    },
    check: (r, _w, sim) => {
      expect(r.out).toContain('rebuild   identity: from its intact copy in namespace uyuni annotation uyuni-cdk.io/records');
      expect(JSON.parse(sim!.get('v1', 'ConfigMap', 'uyuni-cdk-history', 'uyuni').data.identity)).toMatchObject({ fqdn: 'uyuni.example.com' });
    },
  },
  { line: 'uyuni-cdk destroy dist/install                 # dry run: lists, deletes nothing', code: EXIT.ok, check: (_r, _w, sim) => expect(sim!.get('apps/v1', 'Deployment', 'uyuni', 'uyuni')).toBeDefined() },
  { line: 'uyuni-cdk destroy dist/install --yes           # keeps the data: claims, credentials, CA', code: EXIT.ok, check: (_r, _w, sim) => expect(sim!.get('apps/v1', 'Deployment', 'uyuni', 'uyuni')).toBeUndefined() },
  { line: 'uyuni-cdk destroy dist/install --yes --purge-volumes', code: EXIT.ok, check: (_r, _w, sim) => expect(sim!.list('v1', 'PersistentVolumeClaim', 'uyuni')).toEqual([]) },
  {
    line: 'uyuni-cdk unlock -n uyuni install-20261201T101500Z   # the run id a refused run named',
    code: EXIT.ok,
    before: (_w, sim) => staleLock(sim!, 'install-20261201T101500Z'),
    check: (_r, _w, sim) => expect(sim!.get('coordination.k8s.io/v1', 'Lease', 'uyuni-cdk-lock', 'uyuni')).toBeUndefined(),
  },
];

/** An upgrade of a running install (made first, as `run dist/install` does), saved and reviewed, then repeated. */
const UPGRADE: readonly Step[] = [
  {
    line: 'uyuni-cdk plan dist/upgrade --out upgrade.plan && uyuni-cdk run upgrade.plan   # exactly what was reviewed',
    code: EXIT.ok,
    check: (r, _w, sim) => {
      expect(r.out).toContain('Saved the plan to upgrade.plan');
      for (const j of upgradeJobs()) expect([j, sim!.get('batch/v1', 'Job', j, 'uyuni')?.status?.succeeded]).toEqual([j, 1]);
    },
  },
  {
    line: 'uyuni-cdk run dist/upgrade --rerun db-finalize --yes   # repeat one finished data step',
    code: EXIT.ok,
    before: (_w, sim) => { finalizeUid = finalizeJob(sim!)?.metadata?.uid; },
    check: (_r, _w, sim) => {
      expect(finalizeJob(sim!)?.status?.succeeded).toBe(1);
      expect(finalizeJob(sim!)?.metadata?.uid).not.toBe(finalizeUid);
    },
  },
];

const upgradeJobs = () => readPlan(path.join(ROOT, 'dist', 'upgrade')).steps.flatMap((s) => s.objects.filter((o) => o.kind === 'Job').map((o) => o.name));
const finalizeJob = (sim: Simulator) => {
  const name = readPlan(path.join(ROOT, 'dist', 'upgrade')).steps.find((s) => s.name === 'db-finalize')!.objects.find((o) => o.kind === 'Job')!.name;
  return sim.get('batch/v1', 'Job', name, 'uyuni');
};
let finalizeUid: string | undefined;

/** An upgrade by CI, without a question. */
const UPGRADE_CI: readonly Step[] = [
  {
    line: 'uyuni-cdk run dist/upgrade --yes                  # CI: the scale-downs are approved',
    code: EXIT.ok,
    check: (r, _w, sim) => {
      expect(r.out).toMatch(/scale to 0 Deployment\/uyuni \(uyuni\): done/);
      for (const j of upgradeJobs()) expect([j, sim!.get('batch/v1', 'Job', j, 'uyuni')?.status?.succeeded]).toEqual([j, 1]);
    },
  },
];

const SESSIONS = { FILES, COMPLETION, INSTALL, UPGRADE, UPGRADE_CI } as const;

/** A simulator whose server and database run (their pods print a line) and whose inspect Jobs pass dist/upgrade's gates. */
const cluster = () => startSimulator({
  jobs: inspectJobs(),
  deployments: { uyuni: { logs: ['uyuni: setting the server up'] }, db: { logs: ['db: ready to accept connections'] } },
});

describe('every --help example runs', () => {
  let sim: Simulator | undefined;
  afterEach(async () => {
    await sim?.stop();
    sim = undefined;
  });

  it('init, synth, completion, agent render: in an empty directory', async () => {
    await runSession(FILES, place());
    await runSession(COMPLETION, place());
  }, 180_000);

  it('an install: plan, run, status, logs, support, destroy, unlock', async () => {
    sim = await cluster();
    await runSession(INSTALL, project(sim), sim);
  }, 300_000);

  it('an upgrade: saved and run, one data step repeated; and one by CI', async () => {
    for (const steps of [UPGRADE, UPGRADE_CI]) {
      sim = await cluster();
      putClaims(sim);
      expect((await cli('run', path.join(ROOT, 'dist', 'install'), { kubeconfig: sim.kubeconfigPath })).code).toBe(EXIT.ok);
      await runSession(steps, project(sim), sim);
      await sim.stop();
      sim = undefined;
    }
  }, 300_000);

  it('each example of each help is run by exactly one session, and each session line is an example', () => {
    const run = Object.values(SESSIONS).flat().map((s) => s.line);
    expect(run.filter((l, i) => run.indexOf(l) !== i)).toEqual([]);
    const notRun = VERBS.flatMap((v) => examplesOf(HELP[v]).filter((l) => !run.includes(l)).map((l) => `${v}: ${l}`));
    expect(notRun).toEqual([]);
    const inHelp = new Set(VERBS.flatMap((v) => examplesOf(HELP[v])));
    expect(run.filter((l) => !inHelp.has(l))).toEqual([]);
  });

  it("each verb's help is its own: what -o json prints and what the exit codes mean", () => {
    // commander wraps the option descriptions: compared as one line
    const flat = (v: (typeof VERBS)[number]) => HELP[v].replace(/\s+/g, ' ');
    expect(flat('run')).toContain('json (one event per line, as events.jsonl)');
    for (const v of ['plan', 'status', 'destroy'] as const) expect([v, flat(v)]).toEqual([v, expect.stringContaining('json (one JSON document')]);
    for (const v of ['plan', 'status', 'destroy', 'logs', 'support'] as const) expect([v, flat(v).includes('one event per line')]).toEqual([v, false]);
    expect(HELP.logs).not.toContain('--output');
    // "a step failed" is run's (and status's, for the step it reads); plan shows, destroy deletes
    for (const v of ['plan', 'destroy', 'logs', 'support'] as const) expect([v, /^ {2}1 {2}a step failed/m.test(HELP[v])]).toEqual([v, false]);
    expect(HELP.plan).toMatch(/^ {2}0 {2}shown, also when run would stop/m);
    expect(HELP.destroy).toMatch(/^ {2}0 {2}listed \(without --yes\), or deleted \(and gone, unless --wait=false\)/m);
    expect(HELP.run).toMatch(/^ {2}130 {2}interrupted/m);
  });

  it('every verb has examples', () => {
    expect(VERBS.filter((v) => !v.startsWith('agent ') && examplesOf(HELP[v]).length === 0)).toEqual([]);
  });
});
