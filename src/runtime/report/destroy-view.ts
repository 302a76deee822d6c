/**
 * `destroy`'s views: what it did or would do to each object (core/destroy-result.ts), how the
 * wait for the deleted ones ended, and the closing line; as text for people (the list at once,
 * the summary at the end), or as one document for machines (written once, at the end or when
 * the wait fails). Chosen once from `-o` (view.ts).
 */
import type { Plan } from '../../plan/types';
import type { DestroyItem, DestroyMode } from '../core/destroy-result';
import { Target, targetText } from '../core/target';
import { forMachines, machineText, ViewOptions } from './view';

/** What destroy did or would do, and to which plan in which cluster. */
export interface DestroyResult {
  readonly plan: Plan;
  readonly target: Target;
  readonly mode: DestroyMode;
  readonly items: readonly DestroyItem[];
}

export interface DestroyView {
  /** Each object's result, before any wait for the deleted ones. */
  listed(r: DestroyResult): void;
  /** The wait for the deleted objects failed with `message` (the verb then fails with it on stderr). */
  waitFailed(r: DestroyResult, message: string): void;
  /** The end; `gone` when the deleted objects were waited for until gone. */
  finished(r: DestroyResult, gone?: { readonly seconds: number }): void;
}

class DestroyTextView implements DestroyView {
  constructor(private readonly o: ViewOptions) {}

  listed(r: DestroyResult): void {
    this.o.out(renderDestroy(r.plan, r.items, r.mode, r.target) + '\n');
  }

  /** The error says it, once. */
  waitFailed(): void {}

  finished(r: DestroyResult, gone?: { readonly seconds: number }): void {
    this.o.out(`${destroySummary(r.items, { ...r.mode, waited: gone !== undefined })}\n`);
  }
}

class DestroyMachineView implements DestroyView {
  constructor(private readonly o: ViewOptions) {}

  /** The document comes at the end, whole. */
  listed(): void {}

  waitFailed(r: DestroyResult, message: string): void {
    this.o.out(machineText(this.o, { ...this.head(r), waited: { gone: false, message } }));
  }

  finished(r: DestroyResult, gone?: { readonly seconds: number }): void {
    const summary = destroySummary(r.items, { ...r.mode, waited: gone !== undefined });
    this.o.out(machineText(this.o, { ...this.head(r), ...(gone ? { waited: { gone: true, seconds: gone.seconds } } : {}), summary }));
  }

  /** The items without what only the wait needs (`ref`, `uid`: `object` names it). */
  private head(r: DestroyResult) {
    const items = r.items.map(({ ref: _r, uid: _u, ...i }) => i);
    return { plan: r.plan.name, namespace: r.plan.namespace, cluster: r.target, dryRun: !r.mode.yes, items };
  }
}

export function destroyView(o: ViewOptions): DestroyView {
  return forMachines(o) ? new DestroyMachineView(o) : new DestroyTextView(o);
}

export function renderDestroy(plan: Plan, items: readonly DestroyItem[], o: DestroyMode, target?: Target): string {
  const lines = [`${o.yes ? 'destroy' : 'destroy (dry run: nothing deleted; pass --yes to delete)'} plan ${plan.name}, namespace ${plan.namespace}${target ? `, ${targetText(target)}` : ''}`];
  for (const i of items) lines.push(`  ${i.result.padEnd(12)}  ${i.object}${i.detail ? `  (${i.detail})` : ''}`);
  return lines.join('\n');
}

/** The closing line: what was deleted (and whether it is gone), what was kept and why, what was left alone. */
export function destroySummary(items: readonly DestroyItem[], o: DestroyMode & { readonly waited?: boolean }): string {
  const n = (r: DestroyItem['result']) => items.filter((i) => i.result === r).length;
  const kept = items.filter((i) => i.result === 'kept');
  const kinds = new Map<string, number>();
  for (const i of kept) {
    const kind = i.object.split('/')[0];
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  }
  const keptText = kept.length
    ? `, ${kept.length} kept (${[...kinds].map(([k, c]) => `${c} ${k}${c > 1 ? 's' : ''}`).join(', ')}${o.purgeVolumes ? '' : '; --purge-volumes deletes the data'})`
    : '';
  const rest = [n('absent') ? `${n('absent')} already absent` : '', n('not ours') ? `${n('not ours')} not ours (left alone)` : ''].filter(Boolean);
  const tail = `${keptText}${rest.length ? `, ${rest.join(', ')}` : ''}.`;
  if (!o.yes) return `Dry run: ${n('would delete')} would be deleted${tail} Nothing was deleted: --yes deletes.`;
  if (o.waited === false) return `Destroy started: ${n('deleted')} deleted, not waited for (--wait=false)${tail}`;
  return `Destroy complete: ${n('deleted')} deleted and gone${tail}`;
}
