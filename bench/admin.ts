/** What an admin would type for one step of a plan (bench/kubectl.bench.ts, bench/real-plane.bench.ts). */
import * as path from 'path';
import type { Step } from '../src/plan/types';

const ref = (o: { kind: string; name: string }) => `${o.kind.toLowerCase()}/${o.name}`;

/**
 * One step as shell lines (`$k` is the kubectl command): its generated Secrets when missing,
 * `kubectl apply --server-side -f` of its file in `dir`, one batched wait per wait kind. `from`
 * → `to`: the plan's namespace moved, as the step files in `dir` were. `waitBound: false`: no wait
 * for the claims to be Bound (a WaitForFirstConsumer class binds them only for their pod, as kind's
 * and k3s's; the runtime knows that from the StorageClass).
 */
export function adminStepScript(step: Step, dir: string, from?: string, to?: string, opts: { waitBound?: boolean } = {}): string[] {
  const mapNs = (ns: string | undefined) => (ns !== undefined && ns === from && to ? to : ns);
  const lines: string[] = [];
  for (const r of step.requires) {
    if (r.kind !== 'Secret' || r.ifMissing !== 'generate') continue;
    const literals = Object.entries(r.generate ?? {}).map(([k, g]) => `--from-literal=${k}=${'literal' in g ? g.literal : '"$(head -c 24 /dev/urandom | base64)"'}`);
    const ns = mapNs(r.namespace);
    lines.push(`$k -n ${ns} get secret ${r.name} >/dev/null 2>&1 || $k -n ${ns} create secret generic ${r.name} --type=${r.secretType ?? 'Opaque'} ${literals.join(' ')}`);
  }
  lines.push(`$k apply --server-side --field-manager=admin -f ${path.join(dir, step.file)}`);
  const by = (f: string) => step.waits.filter((w) => w.for === f).map((w) => w.object);
  const ns = mapNs(step.waits[0]?.object.namespace);
  const n = ns ? `-n ${ns} ` : '';
  if (opts.waitBound !== false && by('bound').length) lines.push(`$k ${n}wait --for=jsonpath='{.status.phase}'=Bound --timeout=600s ${by('bound').map(ref).join(' ')}`);
  if (by('ready').length) lines.push(`$k ${n}wait --for=condition=Ready --timeout=600s ${by('ready').map(ref).join(' ')}`);
  if (by('complete').length) lines.push(`$k ${n}wait --for=condition=Complete --timeout=600s ${by('complete').map(ref).join(' ')}`);
  for (const d of by('rollout')) lines.push(`$k ${n}rollout status --timeout=600s ${ref(d)}`);
  return lines;
}
