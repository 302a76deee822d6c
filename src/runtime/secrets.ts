/**
 * Requirements: Secrets and ConfigMaps that must exist before a step. `generate` ones are
 * created with random values (crypto-strong, never printed, never written to disk); `fail` ones
 * stop the run with the plan's message.
 */
import { randomInt } from 'crypto';
import type { V1ConfigMap, V1Secret } from '@kubernetes/client-node';
import type { GeneratedValue, Plan, Requirement } from '../plan/types';
import { LABELS, MANAGED_BY } from '../plan/types';
import type { Cluster } from './client';
import { ApiError, StepFailed } from './errors';
import type { Reporter } from './progress';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Random characters from an alphabet safe in URLs, shells and connection strings. */
export function randomValue(length: number): string {
  let s = '';
  for (let i = 0; i < length; i++) s += ALPHABET[randomInt(ALPHABET.length)];
  return s;
}

function generated(g: GeneratedValue | undefined): string {
  if (!g) return randomValue(24);
  return 'literal' in g ? g.literal : randomValue(g.random.length);
}

function keysOf(obj: (V1Secret & V1ConfigMap) | undefined): string[] {
  return [...Object.keys(obj?.data ?? {}), ...Object.keys(obj?.stringData ?? {}), ...Object.keys(obj?.binaryData ?? {})];
}

export type RequirementCheck =
  | { readonly state: 'present' }
  /** `run` stops: `why` follows the object's name (`is missing`, `lacks key(s) …`, and the plan's message). */
  | { readonly state: 'missing'; readonly why: string }
  /** `run` creates the Secret, or adds the keys it lacks. */
  | { readonly state: 'generate'; readonly existing: boolean; readonly missingKeys: readonly string[] };

/** What the preflight of a step does with a requirement, given what the cluster holds: `run` acts on it, `plan` shows it. */
export function checkRequirement(r: Requirement, existing: (V1Secret & V1ConfigMap) | undefined): RequirementCheck {
  const missingKeys = r.keys.filter((k) => !keysOf(existing).includes(k));
  if (existing && missingKeys.length === 0) return { state: 'present' };
  if (r.ifMissing === 'fail' || r.kind !== 'Secret') {
    const what = existing ? `lacks key(s) ${missingKeys.join(', ')}` : 'is missing';
    return { state: 'missing', why: `${what}${r.message ? `: ${r.message}` : ''}` };
  }
  return { state: 'generate', existing: existing !== undefined, missingKeys };
}

/** Creates; a 409 after a retried create means the first attempt went through (never overwrite a Secret). */
async function createOnce(cluster: Cluster, obj: V1Secret): Promise<void> {
  try {
    await cluster.create(obj);
  } catch (e) {
    if (!(e instanceof ApiError && e.status === 409 && cluster.retries > 0)) throw e;
  }
}

export async function satisfyRequirements(cluster: Cluster, plan: Plan, step: string, reqs: readonly Requirement[], reporter: Reporter): Promise<void> {
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
