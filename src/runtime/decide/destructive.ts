/**
 * The destructive changes of a plan: what `run` shows and asks about before its first write
 * (src/runtime/apply/confirm.ts), read from the plan's one verdict (src/runtime/decide/plan-result.ts), which
 * `plan` shows and saves and `run FILE` compares again.
 *
 * One rule per kind, in RULES. To add a kind (an adoption of another tool's object, say): add
 * its name to `DestructiveKind` (src/runtime/core/events.ts: the run's `destructive` event carries the changes), and a rule that reads it from the PlanResult (a new field of
 * the plan if the plan does not show it yet) into the table. `plan` lists the same changes, and
 * `run` asks about them with the others; nothing else changes.
 */
import type { DestructiveChange, DestructiveKind } from '../core/events';
import type { PlanResult, PlannedStep } from './plan-result';

type Rule = (r: PlanResult) => DestructiveChange[];

const perStep = (f: (s: PlannedStep) => DestructiveChange[]): Rule => (r) => r.steps.flatMap(f);

const RULES: Readonly<Record<DestructiveKind, Rule>> = {
  'delete': (r) => [
    ...r.steps.flatMap((s) => s.actions.filter((a) => a.effect === 'delete').map((a) => ({ kind: 'delete' as const, step: s.name, object: a.object, why: `step ${s.name} deletes it` }))),
    ...r.prune.filter((p) => p.action === 'delete').map((p) => ({ kind: 'delete' as const, step: '(run)', object: p.object, why: `pruned: ${p.detail ?? 'no longer in the plan'}` })),
  ],
  'scale-down': perStep((s) => s.actions.filter((a) => a.effect === 'stop').map((a) => ({ kind: 'scale-down' as const, step: s.name, object: a.object, why: `${a.action} (${a.why})` }))),
  // Its Jobs do the work (a step of actions only has them listed as such).
  'data-step': perStep((s) => {
    const jobs = s.objects.filter((o) => o.object.startsWith('Job/') && (o.action === 'create' || o.action === 'recreate'));
    // A one-shot data step, or one whose Jobs delete data on every run (destroysData).
    if (s.skipped || !jobs.length || !(s.oneShot || s.destroysData)) return [];
    return [{ kind: 'data-step' as const, step: s.name, object: jobs.map((o) => o.object).join(', '), why: s.destroysData ?? s.rerunDataStep ?? s.description }];
  }),
  'recreate-job': perStep((s) => s.objects.filter((o) => o.action === 'recreate' && o.finishedJob).map((o) => ({ kind: 'recreate-job' as const, step: s.name, object: o.object, why: o.detail ?? 're-created' }))),
  'recreate': perStep((s) => s.objects.filter((o) => o.action === 'recreate' && o.immutable).map((o) => ({ kind: 'recreate' as const, step: s.name, object: o.object, why: o.detail ?? 're-created' }))),
  'new-credentials': perStep((s) => s.requires.filter((q) => q.besideData).map((q) => ({
    kind: 'new-credentials' as const, step: s.name, object: q.object, why: `generated while the claims hold data: the data does not know the new values (${q.detail ?? 'generated'})`,
  }))),
  'identity': (r) => r.identity.filter((c) => c.allowed).map((c) => ({ kind: 'identity' as const, step: '(run)', object: c.kind, why: `${c.flag}: ${c.message}` })),
  // --adopt and a namespace made by hand are consent given already: only an upgrade's own take-overs ask
  'adopt': (r) => r.takeovers.filter((t) => t.action === 'adopt' && t.asked).map((t) => ({
    kind: 'adopt' as const, step: '(run)', object: t.object, why: `taken over from ${t.owner} by the upgrade of the install it made`,
  })),
};

export function destructiveChanges(r: PlanResult): DestructiveChange[] {
  return Object.values(RULES).flatMap((rule) => rule(r));
}
