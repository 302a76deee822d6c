import type { Gate, Operand } from '../plan/types';
import type { Facts } from './facts';
import { compareVersions } from './versions';

export interface GateResult {
  readonly ok: boolean;
  /** Why: the gate's message plus the values it compared, for the user. */
  readonly detail: string;
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

/** Evaluates one gate. A gate that names a fact nobody printed refuses (never guesses). */
export function evaluateGate(gate: Gate, facts: Facts): GateResult {
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
