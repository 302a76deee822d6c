/**
 * Facts: the `key=value` lines a facts-producing Job printed; later gates read them.
 *
 * They are read from the Job's succeeded pods while those exist, and recorded in the cluster
 * (ConfigMap uyuni-cdk-history, src/runtime/safety/record.ts) when the step completes: a resumed run
 * whose facts pods are gone (a TTL, a drained node, `kubectl delete pod`) takes them from the
 * record. Only when neither exists are they lost, and then the step is named, to be run again.
 */
import type { V1Job } from '@kubernetes/client-node';
import { ApiError } from '../../kube/api-errors';
import type { Cluster } from '../../kube/cluster';
import { podsOfJob } from './jobs';

export type Facts = Record<string, string>;

/** Facts kept in the cluster: of one Job (its uid), or of a one-shot step done in its flow. */
export interface RecordedFacts {
  readonly facts: Readonly<Facts>;
  readonly run: string;
  /** The Job that printed them: they stand for that Job only (a re-created one prints its own). */
  readonly uid?: string;
}

/** Where a step's facts came from, or why there are none. */
export type FactsOfStep =
  | { readonly facts: Facts; readonly from: 'pods' }
  | { readonly facts: Facts; readonly from: 'record'; readonly run: string }
  /** Gone: why (`the pods of Job … were deleted`), and the record holds none of them. */
  | { readonly lost: string };

/** What a gate missing facts says, given the steps whose facts are lost (step → why). */
export function lostFactsText(lost: ReadonlyMap<string, string>): string {
  const steps = [...lost.keys()];
  return `the facts of step${steps.length > 1 ? 's' : ''} ${steps.join(', ')} are gone (${[...lost.values()].join('; ')}) `
    + `and the run's record (ConfigMap uyuni-cdk-history) holds none of them; `
    + `run again with ${steps.map((x) => `--rerun ${x}`).join(' ')} to print them again`;
}

/** Reads `key=value` lines; other lines (progress chatter) are ignored; the last value of a key wins. */
export function parseFacts(text: string): Facts {
  const facts: Facts = {};
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_.\-]*)=(.*)$/.exec(line);
    if (m) facts[m[1]] = m[2].trim();
  }
  return facts;
}

/**
 * The facts a Job's succeeded pods printed, every container's log; `undefined` when no succeeded
 * pod is left to read (deleted, or its log gone with its node).
 */
export async function podFacts(cluster: Cluster, job: V1Job): Promise<Facts | undefined> {
  const pods = (await podsOfJob(cluster, job)).filter((p) => p.status?.phase === 'Succeeded' && !p.metadata?.deletionTimestamp);
  if (pods.length === 0) return undefined;
  const facts: Facts = {};
  for (const p of pods) {
    for (const c of p.spec?.containers ?? []) {
      try {
        Object.assign(facts, parseFacts(await cluster.readLog(p.metadata?.namespace ?? '', p.metadata?.name ?? '', c.name)));
      } catch (e) {
        // Deleted between the list and the read: as if it were gone.
        if (e instanceof ApiError && e.status === 404) return undefined;
        throw e;
      }
    }
  }
  return facts;
}

/**
 * The facts of a step whose `factsFrom` Job completed (or is gone, its step done in its flow):
 * its pods' while they exist; else the record's, of the same Job (uid) or of the step as its flow
 * recorded it; else lost, saying why and which step prints them again.
 */
export async function factsOfStep(
  cluster: Cluster, step: string, jobName: string, job: V1Job | undefined, recorded: ReadonlyArray<RecordedFacts | undefined>,
): Promise<FactsOfStep> {
  if (job) {
    const f = await podFacts(cluster, job);
    if (f) return { facts: f, from: 'pods' };
  }
  const uid = job?.metadata?.uid;
  const kept = recorded.find((r) => r && (r.uid === undefined || r.uid === uid));
  if (kept) return { facts: { ...kept.facts }, from: 'record', run: kept.run };
  return { lost: job ? `the pods of Job ${jobName} were deleted` : `Job ${jobName} was deleted` };
}
