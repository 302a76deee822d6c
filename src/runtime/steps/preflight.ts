/**
 * Stage 2, preflight: the step's gates, from the facts gathered so far, then its required
 * Secrets and ConfigMaps (generated when the plan says so). A refusal fails the step before
 * anything of it is applied.
 */
import { StepFailed } from '../errors';
import { evaluateGate } from '../gates';
import { satisfyRequirements } from '../secrets';
import type { StepRun } from './context';

export async function preflightStage(s: StepRun): Promise<void> {
  for (const g of s.step.gates) {
    const res = evaluateGate(g, s.c.facts, s.c.lostFacts);
    s.emit({ type: 'gate', step: s.step.name, ok: res.ok, detail: res.detail });
    if (!res.ok) await s.fail(`gate refused: ${res.detail}`, [], undefined, [], res.rerun);
  }
  try {
    await satisfyRequirements(s.cluster, s.c.plan, s.step.name, s.step.requires, s.c.reporter);
  } catch (e) {
    if (e instanceof StepFailed) await s.fail(e.message);
    throw e;
  }
}
