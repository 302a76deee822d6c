/**
 * `uyuni-cdk repair-record PLAN_DIR`: the explicit way out of a damaged or half-lost guarded
 * record (src/runtime/safety/record-store.ts), which refuses every run it protects. For each record the
 * plan depends on (its flow, its identity) it decides, shows, asks (`--yes`, or `yes` on a
 * terminal), then writes both places under the namespace's lock:
 *
 * - missing from one place, intact in the other: restored from the intact one;
 * - damaged, intact in the other place: rebuilt from that one;
 * - damaged in every place: rebuilt from the cluster's evidence (src/runtime/safety/evidence.ts): a
 *   migration into a namespace where a server is set up is recorded finished, with every data
 *   step of the plan done as it is now; an upgrade is recorded finished when the server runs the
 *   plan's image generation; the identity is the live one (the server Deployment's image,
 *   uyuni-config's fqdn, uyuni-ca's CA). Without evidence, the damaged value is set aside (the
 *   flow counts as not started, the identity as not recorded).
 *
 * A damaged value is never lost: it is kept in ConfigMap uyuni-cdk-history as
 * `damaged.<key>` (with where it was found) and printed.
 */
import { EXIT } from '../../plan/exit-codes';
import type { Flow, Plan } from '../../plan/types';
import type { Cluster } from '../../kube/cluster';
import { QUESTION } from '../apply/confirm';
import { BadInput, RuntimeError } from '../../kube/api-errors';
import { clusterEvidence, ClusterEvidence } from '../safety/evidence';
import { RunLock } from '../safety/lock';
import type { Manifest } from '../core/manifests';
import { caFingerprint, FlowRecord, oneShotHash, RecordedIdentity } from '../safety/record';
import { damagedKey, damageText, GuardedKey, readGuarded, readOneGuarded, readSources, writeGuarded } from '../safety/record-store';

export interface RepairItem {
  readonly key: GuardedKey;
  /** restore: copy an intact value to the place it is missing from; rebuild: replace a damaged one; set-aside: remove a damaged one. */
  readonly action: 'restore' | 'rebuild' | 'set-aside';
  /** Where the new value comes from, in words. */
  readonly from: string;
  /** The value written (none: set aside). */
  readonly value?: Record<string, unknown>;
  /** What was damaged, in words, and the texts kept. */
  readonly damaged?: string;
  readonly damagedTexts?: ReadonlyArray<{ where: string; text?: string }>;
}

const SEAL_FIELDS = ['v', 'sum', 'writtenAt'];
const unsealed = (v: Record<string, unknown>) => Object.fromEntries(Object.entries(v).filter(([k]) => !SEAL_FIELDS.includes(k)));

/** The guarded keys a plan depends on. */
function keysOf(plan: Plan): GuardedKey[] {
  const flows = [...new Set(plan.steps.flatMap((s) => (s.oneShot ? [s.oneShot] : [])))];
  return [...flows.map((f) => `flow.${f}` as GuardedKey), ...(plan.identity ? ['identity' as const] : [])];
}

function fromEvidence(key: GuardedKey, plan: Plan, e: ClusterEvidence, objectsOf: (step: string) => readonly Manifest[], runId: string, ca: string | undefined): Record<string, unknown> | undefined {
  const at = new Date().toISOString();
  const repaired = `rebuilt by uyuni-cdk repair-record (${runId}) from what the cluster showed: ${e.found.join('; ')}`;
  if (key === 'identity') {
    if (!e.server && !e.fqdn) return undefined;
    const p = plan.identity!;
    const id: RecordedIdentity = {
      fqdn: e.fqdn ?? p.fqdn, product: e.server?.product ?? p.product, imageGeneration: e.server?.tag ?? p.imageGeneration, tlsMode: p.tlsMode,
      ...(ca ? { caFingerprint: ca } : {}), plan: plan.name, run: runId, at, repaired,
    };
    return { ...id };
  }
  const flow = key.slice('flow.'.length) as Flow;
  const set = flow === 'migration' ? Boolean(e.server || e.fqdn) : Boolean(e.server && e.server.tag === plan.identity?.imageGeneration);
  if (!set) return undefined;
  const r: FlowRecord = {
    flow, plan: plan.name, run: runId,
    ...(plan.flow?.source ? { source: plan.flow.source } : {}),
    ...(plan.identity ? { imageGeneration: plan.identity.imageGeneration } : {}),
    finishedAt: at,
    steps: Object.fromEntries(plan.steps.filter((s) => s.oneShot === flow).map((s) => [s.name, { hash: oneShotHash(s, objectsOf(s.name)), run: runId, at }])),
    repaired,
  };
  return { ...r };
}

/** What repair-record would do (reads only). */
export async function planRepair(cluster: Cluster, plan: Plan, objectsOf: (step: string) => readonly Manifest[], runId: string): Promise<RepairItem[]> {
  const sources = await readSources(cluster, plan.namespace);
  let evidence: ClusterEvidence | undefined;
  const out: RepairItem[] = [];
  for (const key of keysOf(plan)) {
    const both = readGuarded(sources, key);
    const places = readOneGuarded(sources, key);
    if (both.state === 'absent') continue;
    if (both.state === 'ok') {
      const missing = places.filter((p) => p.read.state === 'absent').map((p) => p.where);
      if (missing.length === 0 && !both.note) continue;
      out.push({ key, action: 'restore', from: both.note ?? `the intact value (missing from ${missing.join(', ')})`, value: unsealed(both.value) });
      continue;
    }
    const damaged = damageText(both.damage);
    const damagedTexts = both.damage.map((d) => ({ where: d.where, ...(d.text !== undefined ? { text: d.text } : {}) }));
    const intact = places.find((p) => p.read.state === 'ok');
    if (intact && intact.read.state === 'ok') {
      out.push({ key, action: 'rebuild', from: `its intact copy in ${intact.where}`, value: unsealed(intact.read.value), damaged, damagedTexts });
      continue;
    }
    evidence ??= await clusterEvidence(cluster, plan.namespace);
    const value = fromEvidence(key, plan, evidence, objectsOf, runId, key === 'identity' ? await caFingerprint(cluster, plan.namespace) : undefined);
    if (value) out.push({ key, action: 'rebuild', from: `the cluster's evidence: ${evidence.found.join('; ')}`, value, damaged, damagedTexts });
    else {
      const none = key === 'identity' ? 'no server is set up here (no server Deployment, no ConfigMap uyuni-config): the identity is recorded anew at the end of the next run'
        : key === 'flow.migration' ? 'no server is set up here (no server Deployment, no ConfigMap uyuni-config): the migration counts as not started'
          : `the server does not run ${plan.identity?.imageGeneration ?? 'this image generation'}: the upgrade counts as not finished; its data steps run again, gated by what they inspect`;
      out.push({ key, action: 'set-aside', from: none, damaged, damagedTexts });
    }
  }
  return out;
}

/** The repair as text, for the terminal. */
export function renderRepair(plan: Plan, items: readonly RepairItem[]): string {
  if (items.length === 0) return `repair-record ${plan.name}: the records of namespace ${plan.namespace} this plan depends on are intact: nothing to repair`;
  const lines = [`repair-record ${plan.name}: ${items.length} record${items.length === 1 ? '' : 's'} of namespace ${plan.namespace} to write (ConfigMap uyuni-cdk-history and its copy on the namespace):`];
  for (const i of items) {
    lines.push(`  ${i.action.padEnd(9)} ${i.key}: ${i.action === 'set-aside' ? '' : 'from '}${i.from}`);
    if (i.damaged) lines.push(`            damaged: ${i.damaged} (kept as ${damagedKey(i.key)} in ConfigMap uyuni-cdk-history)`);
    if (i.value) lines.push(`            new value: ${JSON.stringify(i.value)}`);
  }
  return lines.join('\n');
}

export interface RepairOptions {
  readonly yes?: boolean;
  readonly ask?: (question: string) => Promise<string>;
  readonly out: (text: string) => void;
}

/** Decides, shows, asks, writes (under the lock). Returns the exit code. */
export async function repairRecords(cluster: Cluster, plan: Plan, objectsOf: (step: string) => readonly Manifest[], runId: string, o: RepairOptions): Promise<number> {
  const lock = new RunLock(cluster, { namespace: plan.namespace, runId, plan, verb: 'repair-record' });
  if (!(await lock.acquire())) throw new BadInput(`namespace ${plan.namespace} does not exist: there is no record to repair`);
  try {
    const items = await planRepair(cluster, plan, objectsOf, runId);
    o.out(`${renderRepair(plan, items)}\n`);
    if (items.length === 0) return EXIT.ok;
    let answer: 'yes' | 'no' | 'none';
    if (o.yes) answer = 'yes';
    else if (!o.ask) answer = 'none';
    else answer = (await o.ask(QUESTION)).trim() === 'yes' ? 'yes' : 'no';
    if (answer === 'none') throw new RuntimeError('no terminal to ask on: nothing was written; review the lines above, then run again with --yes', EXIT.badInput);
    if (answer === 'no') throw new RuntimeError('not approved: nothing was written', EXIT.stepFailed);
    const kept: Record<string, string> = {};
    for (const i of items) if (i.damagedTexts) kept[damagedKey(i.key)] = JSON.stringify({ at: new Date().toISOString(), by: runId, found: i.damagedTexts });
    await writeGuarded(cluster, plan, runId, Object.fromEntries(items.map((i) => [i.key, i.value])), kept, true);
    o.out(`repaired: ${items.map((i) => `${i.key} (${i.action})`).join(', ')}; \`uyuni-cdk plan ${'dist/' + plan.name}\` shows what a run does now\n`);
    return EXIT.ok;
  } finally {
    await lock.release();
  }
}

