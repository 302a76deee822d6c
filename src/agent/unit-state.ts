/**
 * What systemd says about the units the agent runs, kept current from D-Bus PropertiesChanged
 * signals (no polling): one GetAll per interface when a unit is first tracked (or its signal only
 * invalidated values), then the values the signals carry. Signals and replies arrive in the order
 * systemd sent them, so applying each as it arrives leaves the newest values.
 */
import type { UnitState } from './pod-status';
import { SERVICE_IFACE, SystemdManager, UNIT_IFACE, unitObjectPath } from './systemd-dbus';

/** The systemd property names behind UnitState's fields. */
const PROPERTIES: Readonly<Record<string, keyof UnitState>> = {
  ActiveState: 'activeState',
  SubState: 'subState',
  ExecMainStartTimestamp: 'execMainStartTimestamp',
  ExecMainExitTimestamp: 'execMainExitTimestamp',
  ExecMainCode: 'execMainCode',
  ExecMainStatus: 'execMainStatus',
  Result: 'result',
  NRestarts: 'nRestarts',
};

const NUMERIC = new Set<keyof UnitState>(['execMainStartTimestamp', 'execMainExitTimestamp', 'execMainCode', 'execMainStatus', 'nRestarts']);

/** States in which a run has ended (its exit is then kept as the previous run once the next starts). */
const ENDED = new Set(['failed', 'auto-restart', 'exited', 'dead']);

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

export class UnitTracker {
  private readonly byPath = new Map<string, string>();
  private readonly states = new Map<string, Mutable<UnitState>>();
  private readonly ended = new Map<string, UnitState>();

  constructor(private readonly mgr: SystemdManager, private readonly onChange: (unit: string) => void, private readonly onError: (unit: string, e: Error) => void) {}

  /** Starts delivering the signals; call before the first StartUnit. */
  async start(): Promise<void> {
    await this.mgr.watchUnitProperties((path, iface, changed, invalidated) => {
      const unit = this.byPath.get(path);
      if (!unit || (iface !== UNIT_IFACE && iface !== SERVICE_IFACE)) return;
      this.apply(unit, changed);
      if (invalidated.some((p) => p in PROPERTIES)) void this.refresh(unit, iface);
      this.onChange(unit);
    });
  }

  /** Tracks a unit from now on; resolves once its current state is known. */
  async track(unit: string): Promise<UnitState> {
    if (!this.states.has(unit)) {
      this.byPath.set(unitObjectPath(unit), unit);
      this.states.set(unit, {});
    }
    await Promise.all([this.refresh(unit, UNIT_IFACE), this.refresh(unit, SERVICE_IFACE)]);
    return this.get(unit) ?? {};
  }

  untrack(unit: string): void {
    this.byPath.delete(unitObjectPath(unit));
    this.states.delete(unit);
    this.ended.delete(unit);
  }

  get(unit: string): UnitState | undefined {
    const s = this.states.get(unit);
    if (!s) return undefined;
    const previousRun = this.ended.get(unit);
    return previousRun && previousRun.execMainStartTimestamp !== s.execMainStartTimestamp ? { ...s, previousRun } : { ...s };
  }

  /** Asks systemd again for everything (after a resync: signals may have been missed). */
  async refreshAll(): Promise<void> {
    await Promise.all([...this.states.keys()].map((u) => this.track(u).catch((e) => this.onError(u, e as Error))));
  }

  private async refresh(unit: string, iface: string): Promise<void> {
    try {
      const all = await this.mgr.getAllProperties(unitObjectPath(unit), iface);
      if (this.states.has(unit)) this.apply(unit, all);
    } catch (e) {
      this.onError(unit, e as Error);
    }
  }

  private apply(unit: string, values: Record<string, unknown>): void {
    const s = this.states.get(unit);
    if (!s) return;
    for (const [prop, field] of Object.entries(PROPERTIES)) {
      if (!(prop in values)) continue;
      const v = values[prop];
      (s as Record<string, unknown>)[field] = NUMERIC.has(field) ? Number(v) : String(v);
    }
    // Keep the exit of a run that ended, so the next run's status can show it as lastState.
    if (s.execMainStartTimestamp && (ENDED.has(s.subState ?? '') || s.activeState === 'failed') && s.execMainExitTimestamp) {
      this.ended.set(unit, { ...s });
    }
  }
}
