/**
 * The text of a plan verdict (decide/plan-result.ts): what `plan`'s text view (plan-view.ts)
 * prints on a terminal or to a file. Reads the verdict only; computes nothing.
 */
import type { Plan } from '../../plan/types';
import { formatDuration } from '../../plan/duration';
import { podSecurityText } from '../core/pod-security';
import { Target, targetText } from '../core/target';
import { destructiveChanges } from '../decide/destructive';
import { ObjectAction, PlannedObject, PlanResult, refusalLine, unmetLine } from '../decide/plan-result';
import { NO_COLOUR, paintAction, paintDiffLine, Palette } from './colour';

export interface RenderPlanOptions {
  /** `-v`: every unchanged object and every wait listed, not counted. */
  readonly verbose?: boolean;
  /** Colour on a terminal (src/runtime/report/colour.ts). @default none */
  readonly palette?: Palette;
  /** The cluster compared against, for the header. */
  readonly target?: Target;
}

/** Object actions that are counted, not listed, without `-v`: nothing happens to them. */
const QUIET: ReadonlySet<ObjectAction> = new Set(['relabel', 'unchanged', 'skip']);

const count = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** A step's waits without `-v`: one listed as it is, more as a count by what they wait for. */
function waitLines(waits: readonly string[], verbose: boolean): string[] {
  if (verbose || waits.length <= 1) return waits.map((x) => `  waits for ${x}`);
  const byFor = new Map<string, number>();
  for (const w of waits) {
    const f = w.slice(w.lastIndexOf(' ') + 1);
    byFor.set(f, (byFor.get(f) ?? 0) + 1);
  }
  return [`  waits for ${count(waits.length, 'object')} (${[...byFor].map(([f, n]) => `${n} ${f}`).join(', ')}; -v lists them)`];
}

export function renderPlan(plan: Plan, r: PlanResult, o: RenderPlanOptions = {}): string {
  const p = o.palette ?? NO_COLOUR;
  const verbose = Boolean(o.verbose);
  const steps = r.steps;
  const lines = [`plan ${plan.name} (${plan.steps.length} steps, namespace ${plan.namespace}, deadline ${formatDuration(plan.deadlineSeconds)})${o.target ? ` against ${targetText(o.target)}` : ''}`];
  const objectLines = (objects: readonly PlannedObject[]) => {
    const shown = verbose ? objects : objects.filter((x) => !QUIET.has(x.action) || x.diff);
    const quiet = objects.filter((x) => !shown.includes(x));
    const w = Math.max(...objects.map((x) => x.action.length), 6);
    for (const x of shown) {
      lines.push(`  ${paintAction(x.action, x.action.padEnd(w), p)}  ${x.object}${x.detail ? `  (${x.detail})` : ''}`);
      if (x.diff) lines.push(...x.diff.replace(/\n$/, '').split('\n').map((l) => `      ${paintDiffLine(l, p)}`));
    }
    for (const action of QUIET) {
      const same = quiet.filter((x) => x.action === action);
      const details = [...new Set(same.map((x) => x.detail).filter(Boolean))];
      if (same.length) lines.push(`  ${action.padEnd(w)}  ${count(same.length, 'object')}${details.length === 1 ? `  (${details[0]})` : ''}`);
    }
  };
  steps.forEach((s, i) => {
    lines.push('', `[${i + 1}/${steps.length}] ${s.name}: ${s.description} (timeout ${formatDuration(s.timeoutSeconds)})`);
    if (s.skipped) lines.push(`  skipped   ${s.skipped}`);
    for (const g of s.gates) lines.push(`  gate      ${g.startsWith('would REFUSE') ? p.red(g) : g}`);
    for (const m of s.images ?? []) lines.push(`  image     ${m}`);
    for (const q of s.requires) {
      const detail = [q.detail, q.besideData ? 'new credentials beside existing data' : undefined].filter(Boolean).join('; ');
      lines.push(`  requires  ${paintAction(q.action, q.action.padEnd(11), p)} ${q.object}${detail ? `  (${detail})` : ''}`);
    }
    if (s.oneShot) lines.push(`  one-shot  a data step of the ${s.oneShot}: runs once${s.rerunDataStep ? ` (${s.rerunDataStep})` : ''}`);
    if (s.destroysData && !s.skipped) lines.push(`  deletes   ${s.destroysData}`);
    for (const a of s.actions) {
      const what = a.effect === 'none' ? 'not done' : a.effect;
      // `delete  Job/x`, not `delete  delete Job/x`; `stop  scale to 0 Deployment/x`
      lines.push(`  action    ${paintAction(what, what.padEnd(8), p)} ${a.action === a.effect ? '' : `${a.action} `}${a.object}  (${a.why})`);
    }
    objectLines(s.objects);
    lines.push(...waitLines(s.waits, verbose));
  });
  if (r.prune.length) {
    lines.push('', `prune: objects of the plan's ApplySet that the plan no longer has (after the last step)`);
    objectLines(r.prune);
  }
  if (r.recordNotes?.length) lines.push('', ...r.recordNotes.map((n) => `records: ${n}`));
  const allowed = r.identity.filter((c) => c.allowed);
  if (allowed.length) lines.push('', 'identity: changes of the recorded server that their flags allow (run asks first)', ...allowed.map((c) => `  ${c.flag}  ${c.message}`));
  // a re-create (an immutable field, a finished Job) is easy to miss among the steps: listed as run asks about it
  const recreated = destructiveChanges(r).filter((c) => c.kind === 'recreate' || c.kind === 'recreate-job');
  if (recreated.length) {
    const w = Math.max(...recreated.map((c) => c.kind.length));
    lines.push('', 'destructive: objects deleted and created again, their pods with them (run asks first; --yes approves)',
      ...recreated.map((c) => `  ${paintAction('recreate', c.kind.padEnd(w), p)}  ${c.object}  [${c.step}]`));
  }
  if (r.podSecurity) lines.push('', p.yellow(podSecurityText(r.podSecurity)));
  lines.push('');
  if (r.refusals.length || r.unmet.length) lines.push(p.red('run would refuse before any write:'), ...(r.namespaceFirst ? [`  first: ${r.namespaceFirst}`] : []),
    ...r.refusals.map(refusalLine), ...r.unmet.map(unmetLine));
  else if (r.stopsAt) lines.push(p.red(`run would stop at step ${r.stopsAt.step}: ${r.stopsAt.reason}`));
  const s = r.summary;
  const relabel = s.relabel ? `, ${s.relabel} to relabel (bookkeeping labels only)` : '';
  lines.push(p.bold(`Plan: ${s.create} to create, ${s.update} to update, ${s.delete} to delete, ${s.stop} to stop${relabel}, ${s.unchanged} unchanged.`));
  return lines.join('\n');
}
