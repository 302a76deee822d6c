/**
 * Preflight, twice. Before the first write of a run (`unmetRefusal`): every requirement of the
 * whole plan and every gate that can be decided now, all listed at once (decide/plan.ts collects
 * them). Then stage 2 of each step (`preflightStage`): the step's gates, from the facts gathered
 * so far, then its required Secrets and ConfigMaps (generated when the plan says so). A refusal
 * fails the step before anything of it is applied.
 */
import { StepFailed } from '../../core/errors';
import { evaluateGate } from '../../decide/gates';
import { refusalLine, Unmet, unmetLine } from '../../decide/plan-result';
import { satisfyRequirements } from '../requirements';
import { startAgain } from './actions';
import type { StepRun } from './context';

/**
 * What `run` says when requirements of the plan are not met (and the refusals decided with them):
 * all of them, each once, before anything was written. Undefined when there are none.
 */
export function unmetRefusal(unmet: readonly Unmet[], refusals: readonly string[], namespaceFirst?: string): string | undefined {
  if (unmet.length === 0) {
    if (refusals.length === 0) return undefined;
    if (refusals.length === 1) return `refused before any write: ${refusals[0].replace(/\n/g, '\n  ')}`;
    return ['refused before any write:', ...refusals.map(refusalLine)].join('\n');
  }
  const requirements = unmet.filter((u) => u.object).length;
  const rerun = [...new Set(unmet.flatMap((u) => u.rerun ?? []))];
  const gates = unmet.filter((u) => !u.object && !u.rerun).length;
  const counted = [
    requirements ? `${requirements} requirement${requirements > 1 ? 's are' : ' is'} not met` : '',
    gates ? `${gates} gate${gates > 1 ? 's' : ''} refuse${gates > 1 ? '' : 's'}` : '',
    rerun.length ? 'facts the gates need are gone' : '',
  ].filter(Boolean).join(', ');
  return [
    `refused before any write (nothing was changed): ${counted}:`,
    ...(namespaceFirst ? [`  first: ${namespaceFirst}`] : []),
    ...refusals.map(refusalLine),
    ...unmet.map(unmetLine),
    `  then run the same command again${rerun.length ? ` with ${rerun.map((x) => `--rerun ${x}`).join(' ')}` : ''} (\`uyuni-cdk plan\` shows the same list)`,
  ].join('\n');
}

/**
 * The step's gates, then its requirements. A refusal here writes nothing of the step; what an
 * earlier step of this run stopped (a gate that can only be decided once nothing runs: restore's
 * claims) is scaled back first (actions.ts `startAgain`), and the refusal says so.
 */
export async function preflightStage(s: StepRun): Promise<void> {
  for (const g of s.step.gates) {
    const res = evaluateGate(g, s.c.facts, s.c.lostFacts);
    s.emit({ type: 'gate', step: s.step.name, ok: res.ok, detail: res.detail });
    if (!res.ok) await s.fail(`gate refused: ${res.detail}${await startAgain(s)}`, [], undefined, [], res.rerun);
  }
  try {
    await satisfyRequirements(s.cluster, s.c.plan, s.step.name, s.step.requires, s.c.reporter);
  } catch (e) {
    if (e instanceof StepFailed) await s.fail(`${e.message}${await startAgain(s)}`);
    throw e;
  }
}
