/**
 * Which unit files the agent wrote, recorded in its own state directory (`<state-dir>/units/<unit>`,
 * one small JSON file each: the pod, its uid, the SHA-256 of the text written), never in the unit
 * text itself, so a rendered unit is byte for byte what it always was (the #312 comparison).
 * A file in the unit directory is the agent's when its record's hash matches its content.
 */
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';

export interface OwnerRecord {
  /** `namespace/name` */
  readonly pod: string;
  readonly uid: string;
  /** SHA-256 (hex) of the unit text the agent wrote. */
  readonly sha256: string;
}

export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

export class UnitOwnership {
  private readonly dir: string;

  constructor(stateDir: string) {
    this.dir = path.join(stateDir, 'units');
  }

  get(unit: string): OwnerRecord | undefined {
    try {
      const r = JSON.parse(fs.readFileSync(this.file(unit), 'utf8')) as Partial<OwnerRecord>;
      return typeof r.pod === 'string' && typeof r.uid === 'string' && typeof r.sha256 === 'string' ? (r as OwnerRecord) : undefined;
    } catch {
      return undefined;
    }
  }

  /** Whether `content` (the unit file's current text) is what the agent wrote there. */
  owns(unit: string, content: string): boolean {
    return this.get(unit)?.sha256 === sha256(content);
  }

  /** Records that the agent wrote `content` as `unit` for `pod` (atomically: a temporary file renamed). */
  record(unit: string, pod: string, uid: string, content: string): void {
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const tmp = `${this.file(unit)}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify({ pod, uid, sha256: sha256(content) }), { mode: 0o600 });
    fs.renameSync(tmp, this.file(unit));
  }

  forget(unit: string): void {
    fs.rmSync(this.file(unit), { force: true });
  }

  private file(unit: string): string {
    // Unit names are validated (no '/', no '..') before they get here; basename() keeps it so.
    return path.join(this.dir, path.basename(unit));
  }
}
