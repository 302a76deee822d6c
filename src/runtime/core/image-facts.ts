/**
 * A step's images decided at run time (types.ts `ImageFromFact`): every container and init
 * container of the step's Deployments that names a synthesized image runs the value of its fact
 * instead. A restore runs the images its backup recorded this way, pinned by digest: Job
 * uyuni-restore-check prints them (`restore_image.<component>`, src/scripts/lib/backup-record.sh).
 * Pure: the run substitutes before it applies, `plan` says what it would run.
 */
import type { ImageFromFact, ObjectRef, Step } from '../../plan/types';
import type { Facts } from './facts';
import { Manifest, refOf } from './manifests';
import { refString } from '../../kube/cluster';

export interface ImagePin {
  readonly object: ObjectRef;
  /** `container uyuni`, `init container init-volumes` */
  readonly container: string;
  readonly from: string;
  readonly fact: string;
  /** The fact's value; undefined: not known (yet). */
  readonly to?: string;
}

export interface PinnedObjects {
  readonly objects: readonly Manifest[];
  /** Every container the step's facts decide, with its image before and after. */
  readonly pins: readonly ImagePin[];
  /** The objects whose image changed (by refString): they are applied whatever a dry run found. */
  readonly changed: ReadonlySet<string>;
  /** Facts a container needs that are missing or empty. */
  readonly missing: readonly string[];
}

type Container = { name: string; image?: string };

/** The step's objects with their images from `facts` (unknown facts leave the image as it is, and are listed `missing`). */
export function imagesFromFacts(step: Pick<Step, 'imagesFromFacts'>, objects: readonly Manifest[], facts: Facts): PinnedObjects {
  const rules: readonly ImageFromFact[] = step.imagesFromFacts ?? [];
  if (rules.length === 0) return { objects, pins: [], changed: new Set(), missing: [] };
  const pins: ImagePin[] = [];
  const changed = new Set<string>();
  const missing = new Set<string>();
  const out = objects.map((o) => {
    if (o.kind !== 'Deployment') return o;
    const copy = JSON.parse(JSON.stringify(o)) as Manifest & { spec?: { template?: { spec?: { containers?: Container[]; initContainers?: Container[] } } } };
    const pod = copy.spec?.template?.spec;
    for (const [list, what] of [[pod?.initContainers, 'init container'], [pod?.containers, 'container']] as const) {
      for (const c of list ?? []) {
        const rule = rules.find((r) => r.image === c.image);
        if (!rule) continue;
        const to = facts[rule.fact] || undefined;
        pins.push({ object: refOf(o), container: `${what} ${c.name}`, from: rule.image, fact: rule.fact, ...(to ? { to } : {}) });
        if (!to) missing.add(rule.fact);
        else if (to !== c.image) {
          c.image = to;
          changed.add(refString(refOf(o)));
        }
      }
    }
    return changed.has(refString(refOf(o))) ? copy : o;
  });
  return { objects: out, pins, changed, missing: [...missing] };
}
