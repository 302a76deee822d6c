/**
 * The decisions behind "safe to run twice", one function each: the one-shot record (oneshot.ts),
 * the identity check (identity.ts), the effect of an action (steps/actions.ts), the destructive
 * list (destructive.ts), and what a saved plan's verdict does not list (saved-plan.ts `planDrift`).
 */
import type { Plan, Step } from '../../../src/plan/types';
import { destructiveChanges } from '../../../src/runtime/decide/destructive';
import { identityChanges } from '../../../src/runtime/safety/identity';
import { decideOneShot, finishedPlanRefusal } from '../../../src/runtime/safety/oneshot';
import type { PlanResult, PlannedStep, PlannedTakeover } from '../../../src/runtime/decide/plan-result';
import type { Records, RecordedIdentity } from '../../../src/runtime/safety/record';
import { damageRefusals, parseRecords } from '../../../src/runtime/safety/record';
import { seal } from '../../../src/runtime/safety/record-store';
import { planDrift } from '../../../src/runtime/decide/saved-plan';
import { actionEffect } from '../../../src/runtime/decide/action-effect';

const step = (name: string, oneShot?: Step['oneShot']): Step => ({
  name, file: `${name}.k8s.yaml`, description: name, objects: [], waits: [], timeoutSeconds: 60, requires: [], actions: [], gates: [], ...(oneShot ? { oneShot } : {}),
});
const plan = (over: Partial<Plan> = {}): Plan => ({
  formatVersion: 1, name: 'upgrade', description: '', generator: 't', namespace: 'uyuni', selector: {}, deadlineSeconds: 60, steps: [],
  identity: { fqdn: 'uyuni.example.com', product: 'registry.opensuse.org/uyuni/server', imageGeneration: '2026.08', tlsMode: 'generated' }, ...over,
});
const done = (hash: string) => ({ hash, run: 'r1', at: '2026-01-01T00:00:00Z' });

describe('decideOneShot', () => {
  const upgrade = (finishedAt?: string, gen = '2026.08'): Records => ({
    flows: { upgrade: { flow: 'upgrade', plan: 'upgrade', run: 'r1', imageGeneration: gen, ...(finishedAt ? { finishedAt } : {}), steps: { 'db-upgrade': done('h1') } } },
  });

  it('a step that is not one-shot, or a flow without a record: the Jobs decide', () => {
    expect(decideOneShot(step('tls'), 'h', plan(), upgrade('t'), [])).toEqual({ action: 'normal' });
    expect(decideOneShot(step('db-upgrade', 'upgrade'), 'h1', plan(), { flows: {} }, [])).toEqual({ action: 'normal' });
  });

  it('a finished flow: the same spec is done, another spec or a step it never ran is refused, --rerun runs it again', () => {
    expect(decideOneShot(step('db-upgrade', 'upgrade'), 'h1', plan(), upgrade('t'), []).action).toBe('done');
    const refused = decideOneShot(step('db-upgrade', 'upgrade'), 'h2', plan(), upgrade('t'), []);
    expect(refused.action).toBe('refuse');
    expect(refused).toMatchObject({ why: expect.stringContaining('the upgrade of namespace uyuni to 2026.08 finished at t (run r1)') });
    expect(refused).toMatchObject({ why: expect.stringContaining('--rerun db-upgrade') });
    expect(decideOneShot(step('db-finalize', 'upgrade'), 'h', plan(), upgrade('t'), []).action).toBe('refuse');
    expect(decideOneShot(step('db-upgrade', 'upgrade'), 'h2', plan(), upgrade('t'), ['db-upgrade']).action).toBe('rerun');
  });

  it('an upgrade to another image generation is another flow', () => {
    expect(decideOneShot(step('db-upgrade', 'upgrade'), 'h2', plan(), upgrade('t', '2026.03'), [])).toEqual({ action: 'normal' });
  });

  it('a flow under way: a recorded step with the same spec stays done (its Jobs may be gone), anything else is the Jobs\' to decide', () => {
    expect(decideOneShot(step('db-upgrade', 'upgrade'), 'h1', plan(), upgrade(), []).action).toBe('done');
    expect(decideOneShot(step('db-upgrade', 'upgrade'), 'h2', plan(), upgrade(), []).action).toBe('normal');
    expect(decideOneShot(step('db-upgrade', 'upgrade'), 'h1', plan(), upgrade(), ['db-upgrade']).action).toBe('normal');
  });

  it('a finished migration refuses its plan, unless --rerun names one of its data steps', () => {
    const records: Records = { flows: { migration: { flow: 'migration', plan: 'migrate', run: 'm1', source: 'old.example.com', finishedAt: 't', steps: {} } } };
    const migrate = plan({ name: 'migrate', flow: { kind: 'migration', source: 'old.example.com' }, steps: [step('data-sync', 'migration'), step('server')] });
    expect(finishedPlanRefusal(migrate, records, [])).toMatch(/^the migration into namespace uyuni finished at t from old\.example\.com \(run m1\): a finished migration never runs again/);
    expect(finishedPlanRefusal(migrate, records, ['server'])).toBeDefined();
    expect(finishedPlanRefusal(migrate, records, ['data-sync'])).toBeUndefined();
    expect(finishedPlanRefusal(migrate, { flows: {} }, [])).toBeUndefined();
  });

  it('a guarded record that exists but cannot be read is damaged, never ignored; a plan it protects is refused', () => {
    const history = { 'flow.migration': '{"flow":"migration","run":"m","steps":{"data-sync":{"hash":"h","run":"m","at":"t"}}}', 'flow.upgrade': 'not json', identity: '{"fqdn":1}', install: '{"run":"x","jobs":{}}' };
    const r = parseRecords({ namespace: 'uyuni', history });
    expect(Object.keys(r.flows)).toEqual(['migration']);
    expect(r.identity).toBeUndefined();
    expect(r.damage!.map((d) => [d.key, d.where, d.why])).toEqual([
      ['flow.upgrade', 'ConfigMap uyuni/uyuni-cdk-history key flow.upgrade', 'not JSON (8 characters, cut short or edited?)'],
      ['identity', 'ConfigMap uyuni/uyuni-cdk-history key identity', 'incomplete: fields fqdn, product, imageGeneration, tlsMode, run missing or not text'],
    ]);
    const upgrade = plan({ name: 'upgrade', identity: { fqdn: 'f', product: 'p', imageGeneration: '2026.08', tlsMode: 'generated' }, steps: [step('db-upgrade', 'upgrade')] });
    expect(damageRefusals(upgrade, r)).toEqual([
      expect.stringMatching(/^the record flow\.upgrade cannot be read: ConfigMap uyuni\/uyuni-cdk-history key flow\.upgrade: not JSON .*data steps \(db-upgrade\) from running twice: refused, nothing overwritten; repair it with: uyuni-cdk repair-record dist\/upgrade/),
      expect.stringMatching(/^the record identity cannot be read: .*fqdn, image generation and CA from changing unasked/),
    ]);
    // a plan without data steps of the damaged flow and without an identity is not refused
    expect(damageRefusals(plan({ steps: [step('server')], identity: undefined }), r)).toEqual([]);
    // a finished flow with no step recorded is incomplete: damaged
    const emptied = parseRecords({ namespace: 'uyuni', history: { 'flow.migration': '{"flow":"migration","run":"m","finishedAt":"t","steps":{}}' } });
    expect(emptied.flows.migration).toBeUndefined();
    expect(emptied.damage![0].why).toBe('incomplete: a finished flow with no data step recorded (steps: {})');
    expect(parseRecords({ namespace: 'uyuni', history: { 'flow.migration': '{"flow":"migration","run":"m","steps":{}}' } }).damage![0].why)
      .toBe('incomplete: a flow with no data step recorded (steps: {})');
  });

  it('sealed records: an edit breaks the checksum; a value missing from one place is read from the other; two intact ones give the later', () => {
    const flow = { flow: 'migration', plan: 'migrate', run: 'm1', finishedAt: 't', steps: { 'data-sync': { hash: 'h', run: 'm1', at: 't' } } };
    const sealed = seal(flow, '2026-01-01T00:00:00.000Z');
    expect(JSON.parse(sealed)).toMatchObject({ v: 1, writtenAt: '2026-01-01T00:00:00.000Z', sum: expect.stringMatching(/^sha256:/) });
    expect(parseRecords({ namespace: 'uyuni', history: { 'flow.migration': sealed } }).flows.migration?.run).toBe('m1');
    const edited = sealed.replace('"m1"', '"m2"');
    expect(parseRecords({ namespace: 'uyuni', history: { 'flow.migration': edited } }).damage![0].why).toBe('its checksum does not match its content (edited or cut)');
    const fromCopy = parseRecords({ namespace: 'uyuni', history: {}, copy: JSON.stringify({ 'flow.migration': sealed }) });
    expect(fromCopy.flows.migration?.run).toBe('m1');
    expect(fromCopy.notes).toEqual(['ConfigMap uyuni/uyuni-cdk-history key flow.migration is missing: read from its copy (namespace uyuni annotation uyuni-cdk.io/records)']);
    // intact in the ConfigMap, damaged in the copy: damaged (repair-record decides, never a run)
    expect(parseRecords({ namespace: 'uyuni', history: { 'flow.migration': sealed }, copy: JSON.stringify({ 'flow.migration': edited }) }).damage).toHaveLength(1);
    expect(parseRecords({ namespace: 'uyuni', history: { 'flow.migration': sealed }, copy: '{"flow.mig' }).damage![0].where).toBe('namespace uyuni annotation uyuni-cdk.io/records');
    const later = seal({ ...flow, run: 'm2' }, '2026-01-02T00:00:00.000Z');
    expect(parseRecords({ namespace: 'uyuni', history: { 'flow.migration': sealed }, copy: JSON.stringify({ 'flow.migration': later }) }).flows.migration?.run).toBe('m2');
  });
});

describe('identityChanges', () => {
  const recorded: RecordedIdentity = {
    fqdn: 'uyuni.example.com', product: 'p', imageGeneration: '2099.01', tlsMode: 'migrated', caFingerprint: 'sha256:abc', plan: 'migrate', run: 'm1', at: 't',
  };
  it('names the recorded and the planned value of each change; a flag allows it', () => {
    const c = identityChanges(recorded, plan({ identity: { fqdn: 'other.example.com', product: 'p', imageGeneration: '2026.08', tlsMode: 'generated' } }), 'sha256:abc', { allowDowngrade: true });
    expect(c.map((x) => [x.kind, x.recorded, x.planned, x.allowed])).toEqual([
      ['fqdn', 'uyuni.example.com', 'other.example.com', false],
      ['downgrade', '2099.01', '2026.08', true],
      ['new-ca', 'tls.mode migrated (CA sha256:abc…)', 'tls.mode generated', false],
    ]);
  });
  it('a newer generation, the same server: nothing; a tag that is no version is never taken for newer', () => {
    expect(identityChanges(recorded, plan({ identity: { ...recorded, imageGeneration: '2099.02' } }), 'sha256:abc', {})).toEqual([]);
    const latest = identityChanges(recorded, plan({ identity: { ...recorded, imageGeneration: 'latest' } }), 'sha256:abc', {});
    expect(latest.map((c) => [c.kind, c.flag, c.recorded, c.planned, c.allowed])).toEqual([['downgrade', '--allow-downgrade', '2099.01', 'latest', false]]);
    expect(latest[0].message).toContain('one of them is not a version: it cannot be told whether this is an older one');
    expect(identityChanges({ ...recorded, imageGeneration: 'latest' }, plan({ identity: { ...recorded, imageGeneration: 'latest' } }), 'sha256:abc', {})).toEqual([]);
    expect(identityChanges(undefined, plan(), undefined, {})).toEqual([]);
  });
  it('a generated CA whose Secret is gone would be minted anew', () => {
    const gen = { ...recorded, tlsMode: 'generated' };
    expect(identityChanges(gen, plan({ identity: { ...gen, imageGeneration: '2099.01' } }), undefined, {}).map((x) => x.kind)).toEqual(['new-ca']);
    expect(identityChanges(gen, plan({ identity: { ...gen, imageGeneration: '2099.01' } }), 'sha256:abc', {})).toEqual([]);
  });
});

describe('actionEffect', () => {
  const dep = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'uyuni', namespace: 'uyuni' };
  it('is not done when its effect holds already', () => {
    expect(actionEffect({ type: 'scale', object: dep, replicas: 0 }, undefined).effect).toBe('none');
    expect(actionEffect({ type: 'scale', object: dep, replicas: 0 }, { spec: { replicas: 0 } } as never).effect).toBe('none');
    expect(actionEffect({ type: 'scale', object: dep, replicas: 0 }, { spec: { replicas: 2 } } as never)).toMatchObject({ effect: 'stop', why: '2 replicas now' });
    expect(actionEffect({ type: 'scale', object: dep, replicas: 1 }, { spec: { replicas: 0 } } as never).effect).toBe('scale');
    expect(actionEffect({ type: 'delete', object: dep }, undefined).effect).toBe('none');
    expect(actionEffect({ type: 'delete', object: dep }, {} as never).effect).toBe('delete');
  });
});

describe('destructiveChanges', () => {
  const planned = (over: Partial<PlannedStep>): PlannedStep => ({ name: 's', description: 'd', timeoutSeconds: 1, objects: [], waits: [], gates: [], requires: [], actions: [], ...over });
  const result = (steps: PlannedStep[], over: Partial<PlanResult> = {}): PlanResult => ({
    steps, unmet: [], prune: [], summary: { create: 0, update: 0, relabel: 0, delete: 0, stop: 0, unchanged: 0 }, refusals: [], identity: [], takeovers: [], lostCredentials: [], ...over,
  });
  it('a first install has none', () => {
    expect(destructiveChanges(result([planned({ objects: [{ object: 'Deployment/uyuni (uyuni)', action: 'create' }] })]))).toEqual([]);
  });
  it('lists each kind: deletes and prunes, stops, data steps, re-created Complete Jobs, credentials beside data, allowed identity changes', () => {
    const r = result([
      planned({ name: 'stop', actions: [{ effect: 'stop', action: 'scale to 0', object: 'Deployment/uyuni (uyuni)', why: '1 replica now' }, { effect: 'none', action: 'scale to 0', object: 'Deployment/db (uyuni)', why: 'already at 0 replicas' }] }),
      planned({ name: 'sync', oneShot: 'migration', description: 'stop old and copy', objects: [{ object: 'Job/uyuni-data-sync (uyuni)', action: 'create' }] }),
      planned({ name: 'done', oneShot: 'migration', skipped: 'finished', objects: [{ object: 'Job/x (uyuni)', action: 'skip' }] }),
      planned({ name: 'again', objects: [{ object: 'Job/a (uyuni)', action: 'recreate', finishedJob: true }, { object: 'Job/b (uyuni)', action: 'recreate' }] }),
      planned({ name: 'db', requires: [{ object: 'Secret uyuni/db-credentials', action: 'generate', besideData: true }] }),
    ], {
      prune: [{ object: 'Service/hub (uyuni)', action: 'delete' }, { object: 'PersistentVolumeClaim/x (uyuni)', action: 'keep' }],
      identity: [{ kind: 'fqdn', flag: '--allow-fqdn-change', recorded: 'a', planned: 'b', allowed: true, message: 'm' }],
    });
    expect(destructiveChanges(r).map((c) => `${c.kind} ${c.object} [${c.step}]`)).toEqual([
      'delete Service/hub (uyuni) [(run)]',
      'scale-down Deployment/uyuni (uyuni) [stop]',
      'data-step Job/uyuni-data-sync (uyuni) [sync]',
      'recreate-job Job/a (uyuni) [again]',
      'new-credentials Secret uyuni/db-credentials [db]',
      'identity fqdn [(run)]',
    ]);
  });
  const takeover = (object: string, over: Partial<PlannedTakeover> = {}): PlannedTakeover => ({
    object, id: { kind: object.split('/')[0], name: 'x' }, owner: 'Helm release uyuni/uyuni', reason: 'r', adoptable: true, action: 'adopt', ...over,
  });
  it('an upgrade\'s take-overs are asked; those --adopt or a namespace made by hand consented to, and refused ones, are not', () => {
    const r = result([], {
      takeovers: [
        takeover('Service/web (uyuni)', { asked: true }), takeover('ConfigMap/uyuni-config (uyuni)', { asked: true }),
        takeover('Namespace/uyuni', { byDesign: true }), takeover('Service/other (uyuni)'), takeover('ConfigMap/x (uyuni)', { action: 'refuse', adoptable: false }),
      ],
    });
    expect(destructiveChanges(r).map((c) => `${c.kind} ${c.object} [${c.step}] ${c.why}`)).toEqual([
      'adopt Service/web (uyuni) [(run)] taken over from Helm release uyuni/uyuni by the upgrade of the install it made',
      'adopt ConfigMap/uyuni-config (uyuni) [(run)] taken over from Helm release uyuni/uyuni by the upgrade of the install it made',
    ]);
  });

  it('planDrift names each take-over, lost credential and destructive change the saved verdict does not list', () => {
    const saved = result([], { takeovers: [takeover('Service/web (uyuni)', { asked: true })] });
    expect(planDrift(saved, saved)).toEqual([]);
    const now = result([], {
      takeovers: [takeover('Service/web (uyuni)', { asked: true }), takeover('ConfigMap/uyuni-config (uyuni)', { asked: true })],
      lostCredentials: [{ secret: 'db-credentials', namespace: 'uyuni', claims: ['var-pgsql18'], finishedRun: 'install-1', message: 'm' }],
    });
    expect(planDrift(saved, now)).toEqual([
      'take-overs the saved plan does not list: ConfigMap/uyuni-config (uyuni) from Helm release uyuni/uyuni (adopt)',
      'credentials lost since, the saved plan does not list: Secret db-credentials (uyuni)',
      'destructive changes the saved plan does not list: adopt ConfigMap/uyuni-config (uyuni) [(run)]',
    ]);
    // refused now where the file said adopt: not the same verdict
    expect(planDrift(saved, result([], { takeovers: [takeover('Service/web (uyuni)', { action: 'refuse' })] }))).toEqual([
      'take-overs the saved plan does not list: Service/web (uyuni) from Helm release uyuni/uyuni (refuse)',
      'take-overs the saved plan lists that are no longer so: Service/web (uyuni) from Helm release uyuni/uyuni (adopt)',
    ]);
  });
});
