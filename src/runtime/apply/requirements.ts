/**
 * The run's side of requirements (decide/requirements.ts decides): `generate` ones are created
 * with random values (crypto-strong, never printed, never written to disk), a Secret that lacks
 * keys gets them added; `missing` ones stop the step with the plan's message.
 */
import { randomInt } from 'crypto';
import type { V1ConfigMap, V1Secret } from '@kubernetes/client-node';
import type { GeneratedValue, Plan, Requirement } from '../../plan/types';
import { LABELS, MANAGED_BY } from '../../plan/types';
import type { Cluster } from '../../kube/cluster';
import { ApiError } from '../../kube/api-errors';
import { StepFailed } from '../core/errors';
import type { EventSink } from '../core/events';
import { checkRequirement } from '../decide/requirements';
import { APPLY_CONCURRENCY, limiter, mapLimited, READ_CONCURRENCY } from '../../kube/limit';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Random characters from an alphabet safe in URLs, shells and connection strings. */
function randomValue(length: number): string {
  let s = '';
  for (let i = 0; i < length; i++) s += ALPHABET[randomInt(ALPHABET.length)];
  return s;
}

function generated(g: GeneratedValue | undefined): string {
  if (!g) return randomValue(24);
  return 'literal' in g ? g.literal : randomValue(g.random.length);
}

/** Creates; a 409 after a retried create means the first attempt went through (never overwrite a Secret). */
async function createOnce(cluster: Cluster, obj: V1Secret): Promise<void> {
  try {
    await cluster.create(obj);
  } catch (e) {
    if (!(e instanceof ApiError && e.status === 409 && cluster.retries > 0)) throw e;
  }
}

/** What one requirement needs written: nothing (present), keys added, or a Secret created. */
interface Fulfilment {
  readonly r: Requirement;
  readonly existing?: V1Secret & V1ConfigMap;
  readonly missingKeys?: readonly string[];
}

/**
 * Reads every requirement of the step together (issue 36: one round trip, not one per Secret),
 * stops the step before writing anything when one is missing, then writes what is generated
 * together. Events in the step's order, once every write was answered.
 */
export async function satisfyRequirements(cluster: Cluster, plan: Plan, step: string, reqs: readonly Requirement[], reporter: EventSink): Promise<void> {
  const limit = limiter(READ_CONCURRENCY);
  const found = await mapLimited(reqs, limit, (r) => cluster.get<V1Secret & V1ConfigMap>({ apiVersion: 'v1', kind: r.kind, name: r.name, namespace: r.namespace }));
  const todo: Fulfilment[] = reqs.map((r, i) => {
    const check = checkRequirement(r, found[i]);
    if (check.state === 'missing') throw new StepFailed(step, `${r.kind} ${r.namespace}/${r.name} ${check.why}`);
    return { r, existing: found[i], missingKeys: check.state === 'present' ? undefined : check.missingKeys };
  });
  await mapLimited(todo.filter((f) => f.missingKeys), limiter(APPLY_CONCURRENCY), (f) => fulfil(cluster, plan, step, f));
  for (const { r, existing, missingKeys } of todo) {
    reporter.emit({
      type: 'requirement', step, kind: r.kind, name: r.name, namespace: r.namespace,
      result: !missingKeys ? 'present' : existing ? 'completed-keys' : 'generated', keys: [...(missingKeys ?? r.keys)],
    });
  }
}

/** Adds the missing keys to an existing Secret, or creates it with them. */
async function fulfil(cluster: Cluster, plan: Plan, step: string, { r, existing, missingKeys }: Fulfilment): Promise<void> {
  const ref = { apiVersion: 'v1', kind: r.kind, name: r.name, namespace: r.namespace };
  const data: Record<string, string> = {};
  for (const k of missingKeys ?? []) data[k] = Buffer.from(generated(r.generate?.[k])).toString('base64');
  if (existing) {
    await cluster.mergePatch(ref, { data });
    return;
  }
  await createOnce(cluster, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: r.name,
      namespace: r.namespace,
      labels: { ...plan.selector, [LABELS.step]: step, [LABELS.managedBy]: MANAGED_BY },
    },
    type: r.secretType ?? 'Opaque',
    data,
  });
}
