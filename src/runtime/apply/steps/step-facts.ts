/**
 * A step's facts (`factsFrom`) join the run's: from its Job's pods while they exist, else from
 * the record in the cluster (src/runtime/core/facts.ts `factsOfStep`). What the pods printed is
 * recorded when the step completes; facts that are lost are noted, and the gate that needs them
 * names the step to run again (src/runtime/decide/gates.ts).
 */
import * as fs from 'fs';
import * as path from 'path';
import type { V1Job } from '@kubernetes/client-node';
import { Facts, factsOfStep, FactsOfStep, RecordedFacts } from '../../core/facts';
import { objectId } from '../../core/events';
import { recordedJobFacts, recordJobFacts } from '../../safety/record';
import type { StepRun } from './context';

const same = (a: Readonly<Facts>, b: Readonly<Facts>) => JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());

/** The step's facts as found now: `flow` is what its one-shot flow recorded (a step done in it). */
export async function findStepFacts(s: StepRun, job: V1Job | undefined, flow?: RecordedFacts): Promise<FactsOfStep | undefined> {
  const ref = s.step.factsFrom;
  if (!ref) return undefined;
  return factsOfStep(s.cluster, s.step.name, ref.name, job, [recordedJobFacts(s.c.records, ref.name, job?.metadata?.uid), flow]);
}

/**
 * The facts of the step join the run's, are shown, and saved to `<runDir>/facts.json`; what its
 * pods printed is recorded for its Job (unless recorded already). `job`: its `factsFrom` Job, when
 * it completed; `flow`: the facts its flow recorded, when the step is done in it.
 */
export async function gatherFacts(s: StepRun, job: V1Job | undefined, flow?: RecordedFacts): Promise<void> {
  const found = await findStepFacts(s, job, flow);
  if (!found) return;
  const object = objectId({ kind: 'Job', name: s.step.factsFrom!.name, namespace: s.step.factsFrom!.namespace });
  if ('lost' in found) {
    s.c.lostFacts.set(s.step.name, found.lost);
    s.emit({ type: 'action', step: s.step.name, action: 'read facts of', object, result: `gone: ${found.lost}, and none recorded (--rerun ${s.step.name} prints them again)` });
    return;
  }
  s.c.lostFacts.delete(s.step.name);
  if (found.from === 'record') {
    s.emit({ type: 'action', step: s.step.name, action: 'read facts of', object, result: `its pods are gone: the facts recorded by run ${found.run}` });
  }
  Object.assign(s.c.facts, found.facts);
  fs.writeFileSync(path.join(s.c.runDir, 'facts.json'), JSON.stringify(s.c.facts, null, 2) + '\n');
  s.emit({ type: 'facts', step: s.step.name, facts: found.facts });
  const uid = job?.metadata?.uid;
  const kept = recordedJobFacts(s.c.records, s.step.factsFrom!.name, uid);
  if (found.from !== 'pods' || !uid || (kept && same(kept.facts, found.facts))) return;
  try {
    await recordJobFacts(s.cluster, s.c.plan, s.step.name, { name: s.step.factsFrom!.name, uid }, found.facts, s.c.runId);
  } catch (e) {
    // The facts are in this run; a line, as for the run's own record, not a failed step.
    s.emit({ type: 'action', step: s.step.name, action: 'record facts of', object, result: `failed: ${(e as Error).message}` });
  }
}
