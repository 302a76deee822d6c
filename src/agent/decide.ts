/**
 * The cleanup decisions (spec §3 step 5-6) as a pure function: the units found in the slice and
 * the units the node's pods should have → keep or remove, each with its exact log line.
 */
import type { NodeUnits } from '../systemd/render';
import type { Level } from './log';

/** A unit of the slice as found on the node. */
export interface ObservedUnit {
  readonly name: string;
  /** The unit's file (FragmentPath); undefined or empty when systemd reports none. */
  readonly fragmentPath?: string;
  /** The file's text, when it could be read. */
  readonly content?: string;
  /** Why the file could not be read. */
  readonly readError?: string;
}

export type Reason =
  | 'pod-exists'
  | 'terminating'
  | 'no-file-path'
  | 'unreadable'
  | 'differs'
  | 'no-pod'
  /** Two pods map to the unit's name: reported and left alone, never merged. */
  | 'collision'
  /** Its pod cannot be rendered, so the expected content is unknown: left alone. */
  | 'pod-unrenderable';

export interface Decision {
  readonly unit: string;
  readonly action: 'keep' | 'remove';
  readonly reason: Reason;
  readonly level: Level;
  /** The log record, exactly as the reference writes it for the reference's reasons. */
  readonly message: string;
  readonly fragmentPath?: string;
}

function indent(text: string): string {
  return text.split('\n').map((line) => (line ? `    ${line}` : line)).join('\n');
}

export function decideUnit(unit: ObservedUnit, expected: NodeUnits): Decision {
  const u = `The systemd unit [${unit.name}]`;
  const fragmentPath = unit.fragmentPath || undefined;
  const keep = (reason: Reason, level: Level, message: string): Decision => ({ unit: unit.name, action: 'keep', reason, level, message, fragmentPath });
  const remove = (reason: Reason, level: Level, message: string): Decision => ({ unit: unit.name, action: 'remove', reason, level, message, fragmentPath });

  const colliding = expected.collisions.get(unit.name);
  if (colliding) {
    return keep('collision', 'WARN', `${u} is left untouched because the pods ${colliding.map((p) => `[${p}]`).join(' and ')} map to the same unit name; rename one of them.`);
  }
  const broken = expected.errors.find((e) => e.unitNames.includes(unit.name));
  if (broken) {
    return keep('pod-unrenderable', 'WARN', `${u} is left untouched because its pod [${broken.pod}] cannot be rendered: ${broken.message}`);
  }
  const want = expected.units.get(unit.name);
  if (!want) return remove('no-pod', 'INFO', `${u} will be removed because no corresponding pod exists.`);
  if (want.terminating) return remove('terminating', 'INFO', `${u} will be removed because the corresponding pod is terminating.`);
  if (!fragmentPath) return remove('no-file-path', 'INFO', `${u} will be removed because its file path could not be determined.`);
  if (unit.content === undefined) {
    return remove('unreadable', 'WARN', `${u} will be removed because the file content could not be retrieved. ${unit.readError ?? 'unknown error'}`);
  }
  if (unit.content !== want.content) {
    return remove('differs', 'INFO', `${u} will be removed because it differs from the corresponding pod specification.\n${indent(`expected content:\n${want.content}\n\nactual content:\n${unit.content}`)}`);
  }
  return keep('pod-exists', 'INFO', `${u} will be kept because a corresponding pod exists.`);
}

/** One decision per unit, in unit name order. */
export function decideCleanup(units: readonly ObservedUnit[], expected: NodeUnits): Decision[] {
  return [...units].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).map((u) => decideUnit(u, expected));
}
