/**
 * Saved plans, as `terraform plan -out` / `terraform apply PLANFILE`: `plan --out FILE` writes
 * what it showed (the decisions, with the options and the plan directory's digest), and
 * `run FILE` applies exactly that plan directory with those options, refusing before any write
 * when the plan directory or the cluster changed since (its decisions, computed again, differ).
 * A saved plan's destructive changes were shown when it was written: `run FILE` asks nothing.
 */
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { canonicalJson } from '../plan/spec-hash';
import { MAX_PLAN_INDEX_BYTES, MAX_STEP_FILE_BYTES, PLAN_INDEX, readInside } from '../plan/reader';
import type { Plan } from '../plan/types';
import { BadInput } from './errors';
import type { PlanOptions, PlanResult } from './planview';

export const SAVED_PLAN_FORMAT = 'uyuni-cdk saved plan 1';

/** The options of `plan` that `run` takes over from a saved plan (they decide what it does). */
export interface SavedOptions {
  readonly namespace?: string;
  readonly rerun?: readonly string[];
  readonly prune?: boolean;
  readonly purgeVolumes?: boolean;
  readonly allowFqdnChange?: boolean;
  readonly allowDowngrade?: boolean;
  readonly allowNewCa?: boolean;
}

export interface SavedPlan {
  readonly format: typeof SAVED_PLAN_FORMAT;
  readonly savedAt: string;
  /**
   * Relative to the saved file's directory as written (the file and the plan directory move
   * together, no home or checkout path recorded); absolute once read (`readSavedPlan`). An
   * absolute one (older saved plans) is taken as it is.
   */
  readonly planDir: string;
  /** sha256 over the index and every step file. */
  readonly digest: string;
  /** The API server the plan was made against. */
  readonly server: string;
  readonly options: SavedOptions;
  readonly result: PlanResult;
}

/** sha256 of the plan index and the step files it lists, in order. */
export function planDigest(dir: string, plan: Plan): string {
  const h = createHash('sha256').update(readInside(dir, PLAN_INDEX, MAX_PLAN_INDEX_BYTES));
  for (const s of plan.steps) h.update('\0').update(s.file).update('\0').update(readInside(dir, s.file, MAX_STEP_FILE_BYTES));
  return `sha256:${h.digest('hex')}`;
}

export function savedOptionsOf(namespace: string | undefined, o: PlanOptions): SavedOptions {
  const picked: Record<string, unknown> = {
    namespace, rerun: o.rerun, prune: o.prune, purgeVolumes: o.purgeVolumes,
    allowFqdnChange: o.allowFqdnChange, allowDowngrade: o.allowDowngrade, allowNewCa: o.allowNewCa,
  };
  return Object.fromEntries(Object.entries(picked).filter(([, v]) => v !== undefined)) as SavedOptions;
}

export function writeSavedPlan(file: string, p: Omit<SavedPlan, 'format' | 'savedAt'>): void {
  const planDir = path.relative(path.dirname(path.resolve(file)), path.resolve(p.planDir)) || '.';
  const saved: SavedPlan = { format: SAVED_PLAN_FORMAT, savedAt: new Date().toISOString(), ...p, planDir };
  fs.writeFileSync(file, JSON.stringify(saved, null, 2) + '\n', { mode: 0o600 });
}

/** Whether a `run` argument is a saved plan (a file, not a plan directory or its index). */
export function isSavedPlan(arg: string): boolean {
  try {
    if (!fs.statSync(arg).isFile() || path.basename(arg) === PLAN_INDEX) return false;
    const head = fs.readFileSync(arg, 'utf8').slice(0, 200);
    return head.includes(SAVED_PLAN_FORMAT);
  } catch {
    return false;
  }
}

export function readSavedPlan(file: string): SavedPlan {
  let v: Partial<SavedPlan>;
  try {
    v = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<SavedPlan>;
  } catch (e) {
    throw new BadInput(`${file}: not a saved plan (${(e as Error).message})`);
  }
  if (v.format !== SAVED_PLAN_FORMAT || typeof v.planDir !== 'string' || typeof v.digest !== 'string' || !v.result || !v.options) {
    throw new BadInput(`${file}: not a saved plan of this uyuni-cdk (format ${JSON.stringify(v.format)}, expected ${JSON.stringify(SAVED_PLAN_FORMAT)})`);
  }
  // relative to the saved file, wherever `run FILE` is started from
  return { ...v, planDir: path.resolve(path.dirname(path.resolve(file)), v.planDir) } as SavedPlan;
}

/** What differs between the saved decisions and the ones made now (empty: the same plan). */
export function planDrift(saved: PlanResult, now: PlanResult): string[] {
  const out: string[] = [];
  const key = (o: { object: string; action: string }) => `${o.object} ${o.action}`;
  now.steps.forEach((s, i) => {
    const was = saved.steps[i];
    if (!was || was.name !== s.name) {
      out.push(`step ${s.name}: not in the saved plan`);
      return;
    }
    if (canonicalJson(was) === canonicalJson(s)) return;
    const changed = s.objects.filter((o, j) => canonicalJson(o) !== canonicalJson(was.objects[j])).map(key);
    out.push(`step ${s.name}: ${changed.length ? changed.join(', ') : 'its requirements, gates or actions'} (saved: ${was.objects.filter((o, j) => canonicalJson(o) !== canonicalJson(s.objects[j])).map(key).join(', ') || 'other'})`);
  });
  if (canonicalJson(saved.prune) !== canonicalJson(now.prune)) out.push('pruning');
  if (canonicalJson(saved.refusals) !== canonicalJson(now.refusals) || canonicalJson(saved.identity) !== canonicalJson(now.identity)) out.push('the flow records or the identity');
  return out;
}
