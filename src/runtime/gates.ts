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

function describe(op: Operand, facts: Facts): string {
  return 'fact' in op ? `${op.fact}=${facts[op.fact] ?? '(unknown)'}` : JSON.stringify(op.value);
}

/** Evaluates one gate. A gate that names a fact nobody printed refuses (never guesses). */
export function evaluateGate(gate: Gate, facts: Facts): GateResult {
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
