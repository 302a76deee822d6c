/**
 * Requirements: Secrets and ConfigMaps that must exist before a step, decided here for `plan`
 * and `run` alike (`checkRequirement`: present, generated, or missing with the plan's message);
 * the run makes the generated ones (apply/requirements.ts).
 */
import type { V1ConfigMap, V1PersistentVolumeClaim, V1Secret } from '@kubernetes/client-node';
import type { Plan, Requirement } from '../../plan/types';
import type { Cluster } from '../../kube/cluster';
import { finishedRuns } from '../safety/history';
import { selectorString } from '../core/manifests';
import type { LostCredential } from './plan-result';

function keysOf(obj: (V1Secret & V1ConfigMap) | undefined): string[] {
  return [...Object.keys(obj?.data ?? {}), ...Object.keys(obj?.stringData ?? {}), ...Object.keys(obj?.binaryData ?? {})];
}

export type RequirementCheck =
  | { readonly state: 'present' }
  /** `run` stops: `why` follows the object's name (`is missing`, `lacks key(s) …`, and the plan's message). */
  | { readonly state: 'missing'; readonly why: string; readonly existing: boolean; readonly missingKeys: readonly string[] }
  /** `run` creates the Secret, or adds the keys it lacks. */
  | { readonly state: 'generate'; readonly existing: boolean; readonly missingKeys: readonly string[] };

/** What the preflight of a step does with a requirement, given what the cluster holds: `run` acts on it, `plan` shows it. */
export function checkRequirement(r: Requirement, existing: (V1Secret & V1ConfigMap) | undefined): RequirementCheck {
  const missingKeys = r.keys.filter((k) => !keysOf(existing).includes(k));
  if (existing && missingKeys.length === 0) return { state: 'present' };
  if (r.ifMissing === 'fail' || r.kind !== 'Secret') {
    const what = existing ? `lacks key(s) ${missingKeys.join(', ')}` : 'is missing';
    return { state: 'missing', why: `${what}${r.message ? `: ${r.message}` : ''}`, existing: existing !== undefined, missingKeys };
  }
  return { state: 'generate', existing: existing !== undefined, missingKeys };
}

/**
 * The command that makes a missing requirement, when the plan's message does not name one (its
 * messages carry the `kubectl create` for what only the user can make): created with each key
 * from a file, or the keys it lacks added.
 */
export function fixCommand(r: Requirement, check: RequirementCheck): string | undefined {
  if (check.state !== 'missing' || /\bkubectl\b/.test(r.message ?? '')) return undefined;
  const kind = r.kind === 'Secret' ? 'secret' : 'configmap';
  if (!check.existing) {
    return `kubectl -n ${r.namespace} create ${kind}${r.kind === 'Secret' ? ' generic' : ''} ${r.name} ${r.keys.map((k) => `--from-file=${k}=<file>`).join(' ')}`.trimEnd();
  }
  const field = r.kind === 'Secret' ? 'stringData' : 'data';
  return `kubectl -n ${r.namespace} patch ${kind} ${r.name} --type merge -p '{"${field}": {${check.missingKeys.map((k) => `"${k}": "<value>"`).join(', ')}}}'`;
}

/** A key whose value would be new random characters (a user name from a literal is no secret). */
const randomKey = (r: Requirement, k: string) => !(r.generate?.[k] && 'literal' in r.generate[k]);

/**
 * The generated credentials of the plan that are missing (or lack a random key) although their
 * data is kept: a run of the plan's namespace finished (history ConfigMap) and claims of the
 * plan's set are Bound. A new password would not open the kept database, so `run` refuses
 * before any write (docs/runtime.md, "What destroy keeps"). A first install, or a migration
 * resumed before it finished, has no finished run: its credentials are generated as before.
 */
export async function lostCredentials(cluster: Cluster, plan: Plan): Promise<LostCredential[]> {
  // finished runs only: a flow record of a migration under way (src/runtime/safety/record.ts) is no kept data
  // The history and the claims together, then every generated Secret together (issue 36: 2 round
  // trips, not one per read).
  const [history, listed] = await Promise.all([
    finishedRuns(cluster, plan.namespace),
    cluster.list<V1PersistentVolumeClaim>({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: plan.namespace, labelSelector: selectorString(plan.selector) }),
  ]);
  const runs = Object.values(history).map((v) => `${v.run} (finished ${v.finishedAt})`);
  if (runs.length === 0) return [];
  const claims = listed.items.filter((c) => c.status?.phase === 'Bound').map((c) => c.metadata?.name ?? '').sort();
  if (claims.length === 0) return [];
  const out: LostCredential[] = [];
  const seen = new Set<string>();
  const generated = plan.steps.flatMap((s) => s.requires).filter((r) => {
    if (r.kind !== 'Secret' || r.ifMissing !== 'generate' || seen.has(`${r.namespace}/${r.name}`)) return false;
    seen.add(`${r.namespace}/${r.name}`);
    return true;
  });
  const secrets = await Promise.all(generated.map((r) => cluster.get<V1Secret & V1ConfigMap>({ apiVersion: 'v1', kind: 'Secret', name: r.name, namespace: r.namespace })));
  for (const [i, r] of generated.entries()) {
    const check = checkRequirement(r, secrets[i]);
    if (check.state !== 'generate' || !check.missingKeys.some((k) => randomKey(r, k))) continue;
    const what = check.existing ? `lacks key(s) ${check.missingKeys.join(', ')}` : 'is missing';
    const shown = claims.length > 4 ? `${claims.slice(0, 4).join(', ')} and ${claims.length - 4} more` : claims.join(', ');
    out.push({
      secret: r.name, namespace: r.namespace, claims, finishedRun: runs[0],
      message: `Secret ${r.name} (${r.namespace}) ${what}, but the data made with it is kept (claims ${shown} are Bound; run ${runs[0]}): `
        + 'new credentials would not open it, so none are generated. Restore the Secret from your backup '
        + `(kubectl -n ${r.namespace} apply -f ${r.name}.yaml, keys ${r.keys.join(', ')}), `
        + 'or, to start over without the data, delete the claims first (uyuni-cdk destroy <plan> --yes --purge-volumes)',
    });
  }
  return out;
}
