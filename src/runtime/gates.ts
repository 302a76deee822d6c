import type { Gate, Operand } from '../plan/types';
import { Facts, lostFactsText } from './facts';
import { compareVersions } from './versions';

export interface GateResult {
  readonly ok: boolean;
  /** Why: the gate's message plus the values it compared, for the user. */
  readonly detail: string;
  /** A refusal because facts are lost: the steps that print them again (`--rerun`). */
  readonly rerun?: readonly string[];
}

/**
 * A gate that needs facts nobody printed in this run, while some step's facts are lost (its pods
 * gone, none recorded): it cannot be decided. It says so and names the steps to run again, not
 * the gate's own message (which reads as if the data itself were missing).
 */
function undecided(gate: Gate, facts: Facts, lost: ReadonlyMap<string, string>): GateResult | undefined {
  const needs = gate.type === 'present' ? [gate.fact] : [gate.left, gate.right].flatMap((o) => ('fact' in o ? [o.fact] : []));
  const missing = needs.filter((f) => facts[f] === undefined);
  if (missing.length === 0 || lost.size === 0) return undefined;
  const rerun = [...lost.keys()];
  return {
    ok: false,
    rerun,
    detail: `cannot be decided: fact ${missing.join(', ')} is unknown: ${lostFactsText(lost)}`,
  };
}

function value(op: Operand, facts: Facts): string | undefined {
  return 'fact' in op ? facts[op.fact] : op.value;
}

function describe(op: Operand, facts: Facts): string {
  return 'fact' in op ? `${op.fact}=${facts[op.fact] ?? '(unknown)'}` : JSON.stringify(op.value);
}

/**
 * Evaluates one gate. A gate that names a fact nobody printed refuses (never guesses); when facts
 * of a step are `lost`, it names that step to run again.
 */
export function evaluateGate(gate: Gate, facts: Facts, lost: ReadonlyMap<string, string> = new Map()): GateResult {
  const cannot = undecided(gate, facts, lost);
  if (cannot) return cannot;
  if (gate.type === 'present') {
    const v = facts[gate.fact];
    const ok = v !== undefined && v !== '';
    return { ok, detail: ok ? `${gate.fact}=${v}` : `${gate.message} (fact ${gate.fact} is missing)` };
  }
  const l = value(gate.left, facts);
  const r = value(gate.right, facts);
  const shown = `${describe(gate.left, facts)} ${gate.type === 'compare-versions' ? gate.op : gate.type} ${describe(gate.right, facts)}`;
  if (l === undefined || r === undefined) return { ok: false, detail: `${gate.message} (${shown}: a fact is missing)` };
  let ok: boolean;
  if (gate.type === 'compare-versions') {
    let c: number;
    try {
      c = compareVersions(l, r);
    } catch (e) {
      return { ok: false, detail: `${gate.message} (${shown}: ${(e as Error).message})` };
    }
    const results: Record<typeof gate.op, boolean> = { '<': c < 0, '<=': c <= 0, '==': c === 0, '!=': c !== 0, '>=': c >= 0, '>': c > 0 };
    ok = results[gate.op];
  } else {
    ok = gate.type === 'equals' ? l === r : l !== r;
  }
  return { ok, detail: ok ? shown : `${gate.message} (${shown})` };
}
