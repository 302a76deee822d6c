import type { Gate, Operand } from '../../plan/types';
import { Facts, lostFactsText } from '../core/facts';
import { compareVersions } from '../core/versions';

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

type Op = '<' | '<=' | '==' | '!=' | '>=' | '>';

/** `a >= b` read from b's side: `b <= a`. */
const FLIPPED: Readonly<Record<Op, Op>> = { '<': '>', '<=': '>=', '==': '==', '!=': '!=', '>=': '<=', '>': '<' };

/** What the gate expects of its subject, in words: versions are older and newer, strings equal or not. */
function expectation(op: Op, r: string, versions: boolean): string {
  const [below, above] = versions ? ['older', 'newer'] : ['below', 'above'];
  switch (op) {
    case '==': return r;
    case '!=': return `anything but ${r}`;
    case '<': return versions ? `older than ${r}` : `below ${r}`;
    case '<=': return `${r} or ${below}`;
    case '>=': return `${r} or ${above}`;
    case '>': return versions ? `newer than ${r}` : `above ${r}`;
  }
}

/**
 * A comparison in words, from the fact's side (`current_pg_version is 14, expected 16`, not
 * `current_pg_version=14 == "16"`): its subject is the fact when one side is a value.
 */
function inWords(gate: Extract<Gate, { left: Operand }>, facts: Facts): { subject: string; expected: string } {
  let op: Op = gate.type === 'compare-versions' ? gate.op : gate.type === 'equals' ? '==' : '!=';
  let [left, right] = [gate.left, gate.right];
  if (!('fact' in left) && 'fact' in right) {
    [left, right] = [right, left];
    op = FLIPPED[op];
  }
  const known = (o: Operand) => ('fact' in o ? facts[o.fact] : o.value);
  const subject = 'fact' in left ? `${left.fact} is ${known(left) ?? 'unknown (no step printed it)'}` : `the value is ${left.value}`;
  const r = 'fact' in right ? `${right.fact} (${known(right) ?? 'unknown: no step printed it'})` : right.value;
  return { subject, expected: expectation(op, r, gate.type === 'compare-versions') };
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
    return { ok, detail: ok ? `${gate.fact} is ${v}` : `${gate.message} (${gate.fact} is missing: no step printed it)` };
  }
  const l = value(gate.left, facts);
  const r = value(gate.right, facts);
  const w = inWords(gate, facts);
  const refused = `${w.subject}, expected ${w.expected}`;
  if (l === undefined || r === undefined) return { ok: false, detail: `${gate.message} (${refused})` };
  let ok: boolean;
  if (gate.type === 'compare-versions') {
    let c: number;
    try {
      c = compareVersions(l, r);
    } catch (e) {
      return { ok: false, detail: `${gate.message} (${refused}: ${(e as Error).message})` };
    }
    const results: Record<typeof gate.op, boolean> = { '<': c < 0, '<=': c <= 0, '==': c === 0, '!=': c !== 0, '>=': c >= 0, '>': c > 0 };
    ok = results[gate.op];
  } else {
    ok = gate.type === 'equals' ? l === r : l !== r;
  }
  return { ok, detail: ok ? `${w.subject}, as expected: ${w.expected}` : `${gate.message} (${refused})` };
}
