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

export async function satisfyRequirements(cluster: Cluster, plan: Plan, step: string, reqs: readonly Requirement[], reporter: EventSink): Promise<void> {
  for (const r of reqs) {
    const ref = { apiVersion: 'v1', kind: r.kind, name: r.name, namespace: r.namespace };
    const existing = await cluster.get<V1Secret & V1ConfigMap>(ref);
    const check = checkRequirement(r, existing);
    if (check.state === 'present') {
      reporter.emit({ type: 'requirement', step, kind: r.kind, name: r.name, namespace: r.namespace, result: 'present', keys: [...r.keys] });
      continue;
    }
    if (check.state === 'missing') throw new StepFailed(step, `${r.kind} ${r.namespace}/${r.name} ${check.why}`);
    const { missingKeys } = check;
    const data: Record<string, string> = {};
    for (const k of missingKeys) data[k] = Buffer.from(generated(r.generate?.[k])).toString('base64');
    if (existing) {
      await cluster.mergePatch(ref, { data });
    } else {
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
    reporter.emit({ type: 'requirement', step, kind: r.kind, name: r.name, namespace: r.namespace, result: existing ? 'completed-keys' : 'generated', keys: [...missingKeys] });
  }
}
