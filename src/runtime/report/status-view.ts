/**
 * `status`'s views: each step's state (core/status-result.ts) and, when the plan archives, the
 * archiving's, as a table for people or as one document for machines. Chosen once from `-o`
 * (view.ts). Loaded by status's own bundle: it imports nothing of the other verbs (issue 36).
 */
import { WAL_ARCHIVE, type Plan } from '../../plan/types';
import type { ArchiveStatus, StepState, StepStatus } from '../core/status-result';
import { Target, targetText } from '../core/target';
import { NO_COLOUR, Palette } from './colour';
import { forMachines, machineText, ViewOptions } from './view';

export interface StatusView {
  /** Each step's state; `archiving` when the plan archives (db.archiving). */
  status(plan: Plan, steps: StepStatus[], target: Target, archiving?: ArchiveStatus): void;
}

class StatusTextView implements StatusView {
  constructor(private readonly o: ViewOptions) {}

  status(plan: Plan, steps: StepStatus[], target: Target, archiving?: ArchiveStatus): void {
    this.o.out([renderStatus(plan, steps, target, this.o.palette), ...(archiving ? renderArchiveStatus(archiving) : [])].join('\n') + '\n');
  }
}

class StatusMachineView implements StatusView {
  constructor(private readonly o: ViewOptions) {}

  status(plan: Plan, steps: StepStatus[], target: Target, archiving?: ArchiveStatus): void {
    this.o.out(machineText(this.o, { plan: plan.name, namespace: plan.namespace, cluster: target, steps, ...(archiving ? { archiving } : {}) }));
  }
}

export function statusView(o: ViewOptions): StatusView {
  return forMachines(o) ? new StatusMachineView(o) : new StatusTextView(o);
}

/** A state's colour on a terminal: done green, failed red, what is still to do yellow. */
function paintState(state: StepState, text: string, p: Palette): string {
  if (state === 'done') return p.green(text);
  if (state === 'failed') return p.red(text);
  return state === 'waiting' || state === 'running' ? text : p.yellow(text);
}

export function renderStatus(plan: Plan, steps: StepStatus[], target?: Target, palette: Palette = NO_COLOUR): string {
  const w = Math.max(...steps.map((s) => s.name.length), 4);
  const lines = [`plan ${plan.name}, namespace ${plan.namespace}${target ? `, ${targetText(target)}` : ''}`, `${'STEP'.padEnd(w)}  ${'STATE'.padEnd(14)}  DETAIL`];
  for (const s of steps) {
    lines.push(`${s.name.padEnd(w)}  ${paintState(s.state, s.state.padEnd(14), palette)}  ${s.detail}`);
    if (s.facts) lines.push(`${''.padEnd(w)}  ${''.padEnd(14)}  facts: ${Object.entries(s.facts).map(([k, v]) => `${k}=${v}`).join(' ')}`);
    lines.push(...backupLines(s.facts));
  }
  return lines.join('\n');
}

/**
 * The backups a step's Job listed (uyuni-backup-prune prints `backup.<n>=<id> <created> <bytes>
 * <verified|unverified>`, n=1 the newest), as a table under the step.
 */
export function backupLines(facts: Readonly<Record<string, string>> | undefined): string[] {
  const rows = Object.entries(facts ?? {}).filter(([k]) => /^backup\.\d+$/.test(k))
    .sort(([a], [b]) => Number(a.slice(7)) - Number(b.slice(7)))
    .map(([, v]) => v.split(' '));
  if (rows.length === 0) return [];
  const size = (b: string) => (Number(b) >= 1024 ** 3 ? `${(Number(b) / 1024 ** 3).toFixed(1)} GiB` : `${(Number(b) / 1024 ** 2).toFixed(1)} MiB`);
  return ['  BACKUP            CREATED               SIZE        VERIFIED',
    ...rows.map(([id, created, bytes, verified]) => `  ${(id ?? '').padEnd(16)}  ${(created ?? '').padEnd(20)}  ${size(bytes ?? '0').padEnd(10)}  ${verified === 'verified' ? 'yes' : 'no'}`)];
}

const size = (b: number) => (b >= 1024 ** 3 ? `${(b / 1024 ** 3).toFixed(1)} GiB` : `${(b / 1024 ** 2).toFixed(1)} MiB`);

function age(s: number): string {
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  return s < 172800 ? `${Math.round(s / 3600)} h` : `${Math.round(s / 86400)} days`;
}

/** The text under the step table. */
export function renderArchiveStatus(a: ArchiveStatus): string[] {
  const lines = [`archiving (${WAL_ARCHIVE.claim}${a.pod ? `, pod ${a.pod}` : ''}${a.checked ? `, checked ${a.checked}` : ''})`];
  if (a.error) lines.push(`  not known: ${a.error}`);
  if (!a.error || a.lastArchivedWal) {
    lines.push(a.lastArchivedWal
      ? `  newest archived WAL  ${a.lastArchivedWal} at ${a.lastArchivedTime ?? '?'}${a.ageSeconds !== undefined ? ` (${age(a.ageSeconds)} ago)` : ''}`
      : '  newest archived WAL  none yet');
  }
  if (a.failedCount !== undefined) lines.push(`  failed attempts      ${a.failedCount}${a.lastFailedWal ? ` (last: ${a.lastFailedWal})` : ''}`);
  if (a.usedBytes !== undefined && a.sizeBytes !== undefined) {
    lines.push(`  archive claim        ${size(a.usedBytes)} used of ${size(a.sizeBytes)} (${a.sizeBytes ? Math.round((100 * a.usedBytes) / a.sizeBytes) : 0}%)`);
  }
  return lines;
}
