/**
 * Saved plans, as `terraform plan -out` / `terraform apply PLANFILE`: `plan --out FILE` writes
 * what it showed, the whole verdict (src/runtime/decide/plan-result.ts: the steps, pruning, refusals,
 * identity, the take-overs of other owners' objects and the lost credentials) with the decision
 * flags it was made with and the plan directory's digest, and `run FILE` applies exactly that
 * plan directory with those flags, refusing before any write when the plan directory or the
 * cluster changed since (its verdict, made again, differs: a take-over, a lost credential or a
 * destructive change the file does not list is named). A saved plan's destructive changes were
 * shown when it was written: `run FILE` asks nothing about them.
 */
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { canonicalJson } from '../../plan/spec-hash';
import { MAX_PLAN_INDEX_BYTES, MAX_STEP_FILE_BYTES, PLAN_INDEX, readInside } from '../../plan/reader';
import type { Plan } from '../../plan/types';
import { destructiveChanges } from './destructive';
import { BadInput } from '../../kube/api-errors';
import { DECISION_FLAGS, DecisionFlags, decisionFlagsOf, PlanResult } from './plan-result';

/** What every saved plan's format starts with, whatever its version. */
const FORMAT_NAME = 'uyuni-cdk saved plan';
/**
 * 2: the verdict holds the take-overs and lost credentials, and `flags` every decision flag
 * (format 1 had neither, nor `--adopt`: it is refused, never read as "no flags").
 */
export const SAVED_PLAN_FORMAT = `${FORMAT_NAME} 2`;

/** What `run FILE` takes over from a saved plan besides its flags. */
export interface SavedOptions {
  readonly namespace?: string;
}

export interface SavedPlan {
  readonly format: typeof SAVED_PLAN_FORMAT;
  readonly savedAt: string;
  /**
   * Relative to the saved file's directory as written (the file and the plan directory move
   * together, no home or checkout path recorded); absolute once read (`readSavedPlan`). An
   * absolute one is taken as it is.
   */
  readonly planDir: string;
  /** sha256 over the index and every step file. */
  readonly digest: string;
  /** The API server the plan was made against. */
  readonly server: string;
  readonly options: SavedOptions;
  /** Every decision flag the plan was made with, each written out: what `run FILE` runs with. */
  readonly flags: Required<DecisionFlags>;
  readonly result: PlanResult;
}

/** sha256 of the plan index and the step files it lists, in order. */
export function planDigest(dir: string, plan: Plan): string {
  const h = createHash('sha256').update(readInside(dir, PLAN_INDEX, MAX_PLAN_INDEX_BYTES));
  for (const s of plan.steps) h.update('\0').update(s.file).update('\0').update(readInside(dir, s.file, MAX_STEP_FILE_BYTES));
  return `sha256:${h.digest('hex')}`;
}

export function writeSavedPlan(file: string, p: Omit<SavedPlan, 'format' | 'savedAt' | 'flags'> & { flags: DecisionFlags }): void {
  const planDir = path.relative(path.dirname(path.resolve(file)), path.resolve(p.planDir)) || '.';
  const saved: SavedPlan = { format: SAVED_PLAN_FORMAT, savedAt: new Date().toISOString(), ...p, planDir, flags: decisionFlagsOf(p.flags) };
  fs.writeFileSync(file, JSON.stringify(saved, null, 2) + '\n', { mode: 0o600 });
}

/** Whether a `run` argument is a saved plan (a file, not a plan directory or its index). */
export function isSavedPlan(arg: string): boolean {
  try {
    if (!fs.statSync(arg).isFile() || path.basename(arg) === PLAN_INDEX) return false;
    // any version: an older one is then refused by name (readSavedPlan), not read as a plan directory
    const head = fs.readFileSync(arg, 'utf8').slice(0, 200);
    return head.includes(FORMAT_NAME);
  } catch {
    return false;
  }
}

/** The saved flags, each of its type: a file without them (or with one damaged) is refused, never read as "no flags". */
function flagsOfFile(file: string, v: unknown): Required<DecisionFlags> {
  const f = (v ?? {}) as Record<string, unknown>;
  const wrong = (Object.keys(DECISION_FLAGS) as Array<keyof DecisionFlags>).filter((k) => (k === 'rerun'
    ? !Array.isArray(f[k]) || !(f[k] as unknown[]).every((x) => typeof x === 'string')
    : typeof f[k] !== 'boolean'));
  if (typeof v !== 'object' || v === null || wrong.length) {
    throw new BadInput(`${file}: its decision flags are missing or damaged (${wrong.map((k) => `flags.${k}`).join(', ')}): nothing was done; make and review a new plan (uyuni-cdk plan --out)`);
  }
  return f as unknown as Required<DecisionFlags>;
}

export function readSavedPlan(file: string): SavedPlan {
  let v: Omit<Partial<SavedPlan>, 'format' | 'flags'> & { format?: unknown; flags?: unknown };
  try {
    v = JSON.parse(fs.readFileSync(file, 'utf8')) as typeof v;
  } catch (e) {
    throw new BadInput(`${file}: not a saved plan (${(e as Error).message})`);
  }
  if (v.format !== SAVED_PLAN_FORMAT) {
    const older = typeof v.format === 'string' && v.format.startsWith(FORMAT_NAME);
    throw new BadInput(`${file}: ${older ? `a saved plan of another uyuni-cdk (format ${JSON.stringify(v.format)}, this one reads ${JSON.stringify(SAVED_PLAN_FORMAT)})`
      : `not a saved plan of this uyuni-cdk (format ${JSON.stringify(v.format)}, expected ${JSON.stringify(SAVED_PLAN_FORMAT)})`}: `
      + 'nothing was done; make and review the plan again with this uyuni-cdk (uyuni-cdk plan --out)');
  }
  const r = v.result;
  if (typeof v.planDir !== 'string' || typeof v.digest !== 'string' || !v.options || !r || !Array.isArray(r.steps) || !Array.isArray(r.takeovers) || !Array.isArray(r.lostCredentials)) {
    throw new BadInput(`${file}: a damaged saved plan (planDir, digest, options or its verdict missing): nothing was done; make and review a new plan (uyuni-cdk plan --out)`);
  }
  const flags = flagsOfFile(file, v.flags);
  // relative to the saved file, wherever `run FILE` is started from
  return { ...v, flags, planDir: path.resolve(path.dirname(path.resolve(file)), v.planDir) } as SavedPlan;
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
  // named one by one: what the saved plan did not list is never approved by it
  const takeover = (t: PlanResult['takeovers'][number]) => `${t.object} from ${t.owner} (${t.action})`;
  const added = (a: readonly string[], b: readonly string[]) => a.filter((x) => !b.includes(x));
  const takeovers = { saved: saved.takeovers.map(takeover), now: now.takeovers.map(takeover) };
  if (added(takeovers.now, takeovers.saved).length) out.push(`take-overs the saved plan does not list: ${added(takeovers.now, takeovers.saved).join(', ')}`);
  if (added(takeovers.saved, takeovers.now).length) out.push(`take-overs the saved plan lists that are no longer so: ${added(takeovers.saved, takeovers.now).join(', ')}`);
  const lost = (r: PlanResult) => r.lostCredentials.map((l) => `Secret ${l.secret} (${l.namespace})`);
  if (added(lost(now), lost(saved)).length) out.push(`credentials lost since, the saved plan does not list: ${added(lost(now), lost(saved)).join(', ')}`);
  const destructive = (r: PlanResult) => destructiveChanges(r).map((c) => `${c.kind} ${c.object} [${c.step}]`);
  if (added(destructive(now), destructive(saved)).length) out.push(`destructive changes the saved plan does not list: ${added(destructive(now), destructive(saved)).join(', ')}`);
  return out;
}
