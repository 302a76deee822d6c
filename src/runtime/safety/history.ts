/**
 * Run history: which step Jobs belong to runs that finished.
 *
 * Step Jobs have fixed names (`uyuni-db-upgrade`, ...), and a Job's pod template is immutable.
 * A changed Job left by an interrupted run must be refused (the plan changed under a half-done
 * run), but one left by a run that finished is history: the next migration or upgrade
 * re-creates it without asking. The runtime records the Jobs of every finished run in a
 * ConfigMap in the plan's namespace, keyed by plan, and tells the two apart by Job uid. The same
 * ConfigMap holds the records of one-shot flows and the server's identity (src/runtime/safety/record.ts).
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import { HISTORY_CONFIGMAP, LABELS, MANAGED_BY, Plan } from '../../plan/types';
import { limiter, mapLimited } from '../../kube/limit';
import type { Cluster } from '../../kube/cluster';

export { HISTORY_CONFIGMAP };

/** What one plan's last finished run left behind. */
export interface FinishedRun {
  readonly run: string;
  readonly finishedAt: string;
  /** Job name → uid. */
  readonly jobs: Readonly<Record<string, string>>;
}

const ref = (namespace: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', name: HISTORY_CONFIGMAP, namespace });

function parse(data: Record<string, string> | undefined): Record<string, FinishedRun> {
  const out: Record<string, FinishedRun> = {};
  for (const [plan, text] of Object.entries(data ?? {})) {
    try {
      const v = JSON.parse(text) as Partial<FinishedRun> | null;
      if (v && typeof v.run === 'string' && v.jobs && typeof v.jobs === 'object') out[plan] = v as FinishedRun;
    } catch {
      // an entry we cannot read protects nothing: ignore it
    }
  }
  return out;
}

/** The finished runs recorded in the namespace, by plan (not the flow records beside them). */
export async function finishedRuns(cluster: Cluster, namespace: string): Promise<Record<string, FinishedRun>> {
  return parse(await readHistory(cluster, namespace));
}

/** The uids of the Jobs of every finished run (of any plan) in the history ConfigMap's entries (`readHistory`). */
export function finishedJobUids(history: Readonly<Record<string, string>>): Set<string> {
  return new Set(Object.values(parse(history)).flatMap((r) => Object.values(r.jobs)));
}

/** The history ConfigMap's entries as they are (plans' finished runs, flow records: src/runtime/safety/record.ts). */
export async function readHistory(cluster: Cluster, namespace: string): Promise<Record<string, string>> {
  return (await cluster.get<V1ConfigMap>(ref(namespace)))?.data ?? {};
}

/**
 * Sets entries of the history ConfigMap, keeping every other entry as it is (another plan's
 * run, a flow record). `undefined` removes an entry.
 */
export async function writeHistory(
  cluster: Cluster, plan: Plan, runId: string, entries: Readonly<Record<string, string | undefined>>, current?: Readonly<Record<string, string>>,
): Promise<void> {
  // `current`: the map as the caller just read it, nothing written to it since (this run holds the lock)
  const data: Record<string, string> = { ...current ?? await readHistory(cluster, plan.namespace) };
  for (const [k, v] of Object.entries(entries)) {
    if (v === undefined) delete data[k];
    else data[k] = v;
  }
  const cm: V1ConfigMap = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      ...ref(plan.namespace),
      labels: { ...plan.selector, [LABELS.component]: 'step', [LABELS.managedBy]: MANAGED_BY, [LABELS.run]: runId },
    },
    // Server-side apply owns the whole map: every entry is written back, not just ours.
    data,
  };
  await cluster.apply(cm);
}

/** The history entry of a finished run of `plan`: the uids of its step Jobs as they are now. */
export async function finishedRunEntry(cluster: Cluster, plan: Plan, runId: string): Promise<Record<string, string>> {
  const jobs: Record<string, string> = {};
  const refs = plan.steps.flatMap((step) => step.objects.filter((x) => x.kind === 'Job'));
  // read together, at most READ_CONCURRENCY at once; recorded in the plan's order
  const read = await mapLimited(refs, limiter(), (o) => cluster.get(o));
  refs.forEach((o, i) => {
    const uid = read[i]?.metadata?.uid;
    if (uid) jobs[o.name] = uid;
  });
  const entry: FinishedRun = { run: runId, finishedAt: new Date().toISOString(), jobs };
  return { [plan.name]: JSON.stringify(entry) };
}
