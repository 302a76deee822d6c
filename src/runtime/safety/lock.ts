/**
 * The lock: one `run` or `destroy` per namespace at a time, as a coordination.k8s.io/v1 Lease
 * `uyuni-cdk-lock` in the plan's namespace (docs/runtime.md, "Locking").
 *
 * - Taken by creating the Lease (the API server lets one create win); its holderIdentity is the
 *   run id, its annotations say who holds it (user, host, pid, plan, verb, start time).
 * - Renewed every third of its leaseDurationSeconds while the holder runs; released (deleted)
 *   at the end, on failure and on Ctrl-C.
 * - A Lease whose renewTime is older than its leaseDurationSeconds is stale (its holder died):
 *   the next run takes it over with an update conditional on its resourceVersion. So is one
 *   whose holder ran on this host under a pid that no longer exists.
 * - A namespace that does not exist yet (a first install) cannot hold the Lease: the lock is
 *   taken right after the step that creates it, before any other step (`beforeStep`).
 * - `uyuni-cdk unlock -n NS RUN_ID` deletes a Lease left behind, naming its holder's run id.
 */
import * as os from 'os';
import type { KubernetesObject, V1Lease } from '@kubernetes/client-node';
import { formatDuration } from '../../plan/duration';
import { EXIT } from '../../plan/exit-codes';
import { LABELS, MANAGED_BY, ObjectRef, Plan, Step } from '../../plan/types';
import { Cluster, refString } from '../../kube/cluster';
import { ApiError, BadInput, RuntimeError } from '../../kube/api-errors';

export const LOCK_NAME = 'uyuni-cdk-lock';

/** The Lease's annotations: who holds the lock. */
export const LOCK_ANNOTATIONS = {
  run: 'uyuni-cdk.io/lock-run',
  user: 'uyuni-cdk.io/lock-user',
  host: 'uyuni-cdk.io/lock-host',
  pid: 'uyuni-cdk.io/lock-pid',
  plan: 'uyuni-cdk.io/lock-plan',
  verb: 'uyuni-cdk.io/lock-verb',
  started: 'uyuni-cdk.io/lock-started',
} as const;

/** How long a lock outlives its holder's last renewal. @default 60 s ($UYUNI_CDK_LOCK_LEASE_SECONDS) */
export function leaseSeconds(): number {
  const v = Number(process.env.UYUNI_CDK_LOCK_LEASE_SECONDS);
  return Number.isFinite(v) && v >= 1 ? Math.round(v) : 60;
}

/** How often a run that waits (`--lock-timeout`) asks again. */
const RETRY_MS = 1000;

/** The lock is held by someone else: exit 1, naming the holder. */
export class Locked extends RuntimeError {
  constructor(message: string) {
    super(message, EXIT.stepFailed);
  }
}

export interface Holder {
  readonly runId: string;
  readonly user: string;
  readonly host: string;
  readonly pid: number;
  readonly plan: string;
  readonly verb: string;
  readonly started: string;
}

export interface LockOptions {
  readonly namespace: string;
  readonly runId: string;
  readonly plan: Plan;
  /** `run` or `destroy`. */
  readonly verb: string;
  /** Wait this long for a held lock (`--lock-timeout`). @default 0: fail at once */
  readonly timeoutSeconds?: number;
  /** Told what the lock does: taken, waited for, taken over, released. */
  readonly onEvent?: (action: string, result: string) => void;
}

const leaseRef = (namespace: string): ObjectRef => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', name: LOCK_NAME, namespace });

/** MicroTime as the API server writes it: RFC 3339 with microseconds. */
export function microTime(d = new Date()): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

function userName(): string {
  try {
    return os.userInfo().username;
  } catch {
    return process.env.USER ?? 'unknown';
  }
}

export function holderOf(lease: V1Lease): Holder {
  const a = lease.metadata?.annotations ?? {};
  return {
    runId: a[LOCK_ANNOTATIONS.run] ?? lease.spec?.holderIdentity ?? '(unknown)',
    user: a[LOCK_ANNOTATIONS.user] ?? '(unknown)',
    host: a[LOCK_ANNOTATIONS.host] ?? '(unknown)',
    pid: Number(a[LOCK_ANNOTATIONS.pid] ?? 0),
    plan: a[LOCK_ANNOTATIONS.plan] ?? '(unknown)',
    verb: a[LOCK_ANNOTATIONS.verb] ?? '(unknown)',
    started: a[LOCK_ANNOTATIONS.started] ?? '(unknown)',
  };
}

/** `run install-20261201T101500.500Z (plan install) by alice@admin1, pid 4242, since 2026-12-01T10:15:00Z` */
export function describeHolder(h: Holder): string {
  return `${h.verb} ${h.runId} (plan ${h.plan}) by ${h.user}@${h.host}, pid ${h.pid}, since ${h.started}`;
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Why a lease no longer protects anything (its holder is gone), or undefined while it holds. */
export function staleness(lease: V1Lease, now = Date.now()): string | undefined {
  const renewed = Date.parse(String(lease.spec?.renewTime ?? lease.spec?.acquireTime ?? lease.metadata?.creationTimestamp ?? ''));
  const duration = lease.spec?.leaseDurationSeconds ?? leaseSeconds();
  if (!Number.isFinite(renewed)) return 'it has no renewTime';
  if (now > renewed + duration * 1000) return `not renewed since ${new Date(renewed).toISOString()} (leaseDurationSeconds ${duration})`;
  const h = holderOf(lease);
  if (h.host === os.hostname() && h.pid > 0 && h.pid !== process.pid && !pidAlive(h.pid)) return `its holder, pid ${h.pid} on this host, is no longer running`;
  return undefined;
}

function leaseObject(o: LockOptions, started: string, resourceVersion?: string): KubernetesObject & { spec: object } {
  const now = microTime();
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name: LOCK_NAME,
      namespace: o.namespace,
      ...(resourceVersion ? { resourceVersion } : {}),
      labels: { [LABELS.managedBy]: MANAGED_BY },
      annotations: {
        [LOCK_ANNOTATIONS.run]: o.runId,
        [LOCK_ANNOTATIONS.user]: userName(),
        [LOCK_ANNOTATIONS.host]: os.hostname(),
        [LOCK_ANNOTATIONS.pid]: String(process.pid),
        [LOCK_ANNOTATIONS.plan]: o.plan.name,
        [LOCK_ANNOTATIONS.verb]: o.verb,
        [LOCK_ANNOTATIONS.started]: started,
      },
    },
    spec: { holderIdentity: o.runId, leaseDurationSeconds: leaseSeconds(), acquireTime: now, renewTime: now },
  };
}

/** Locks this process holds: released on Ctrl-C (releaseHeldLocks) as at the end of a run. */
const held = new Set<RunLock>();

/**
 * The lock of one run. `acquire` at the start (deferred while the namespace does not exist),
 * `beforeStep` before every step, `release` at the end whatever happened.
 */
export class RunLock {
  private resourceVersion: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private renewing: Promise<void> | undefined;
  /** Set when a renewal found the Lease gone or taken over: the run must stop. */
  private lost: string | undefined;
  /** When the Lease was last taken or renewed (ms), and why the last renewal failed. */
  private renewedAt = 0;
  private renewError: string | undefined;
  private readonly started = new Date().toISOString();
  /** The last try found no namespace to hold the Lease. */
  private namespaceMissing = false;

  constructor(private readonly cluster: Cluster, private readonly o: LockOptions) {}

  get ref(): ObjectRef {
    return leaseRef(this.o.namespace);
  }

  get held(): boolean {
    return this.resourceVersion !== undefined;
  }

  private emit(action: string, result: string): void {
    this.o.onEvent?.(action, result);
  }

  /**
   * Takes the lock, waiting up to the lock timeout for a held one. False when the namespace does
   * not exist yet (the lock is taken later, by `beforeStep`).
   */
  async acquire(): Promise<boolean> {
    const deadline = Date.now() + (this.o.timeoutSeconds ?? 0) * 1000;
    let said = '';
    for (;;) {
      const r = await this.tryAcquire();
      if (r.state !== 'held') return r.state === 'taken';
      const who = describeHolder(holderOf(r.lease));
      if (Date.now() >= deadline) {
        const waited = this.o.timeoutSeconds ? ` (waited ${formatDuration(this.o.timeoutSeconds)})` : '';
        throw new Locked(`namespace ${this.o.namespace} is locked by ${who}${waited}: wait for it to finish (--lock-timeout 10m waits), `
          + `or, if it is gone, uyuni-cdk unlock -n ${this.o.namespace} ${holderOf(r.lease).runId}`);
      }
      if (said !== who) this.emit('wait for lock', `held by ${who}`);
      said = who;
      await new Promise((res) => setTimeout(res, Math.min(RETRY_MS, Math.max(0, deadline - Date.now()))));
    }
  }

  private async tryAcquire(): Promise<{ state: 'taken' | 'no-namespace' } | { state: 'held'; lease: V1Lease }> {
    try {
      const made = await this.cluster.create(leaseObject(this.o, this.started));
      return this.taken(made as V1Lease, 'acquired');
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      if (e.status === 404) {
        this.namespaceMissing = true;
        return { state: 'no-namespace' };
      }
      if (e.status !== 409) throw e;
    }
    const lease = await this.cluster.get<V1Lease>(this.ref);
    if (!lease) return this.tryAcquire(); // released between our create and our read
    const stale = staleness(lease);
    if (!stale) return { state: 'held', lease };
    try {
      // conditional on the resourceVersion read: of two runs taking it over, one wins
      const made = await this.cluster.mergePatch(this.ref, leaseObject(this.o, this.started, lease.metadata?.resourceVersion));
      return this.taken(made as V1Lease, `taken over from ${describeHolder(holderOf(lease))}: ${stale}`);
    } catch (e) {
      if (e instanceof ApiError && (e.status === 409 || e.status === 404)) return this.tryAcquire();
      throw e;
    }
  }

  private taken(lease: V1Lease, how: string): { state: 'taken' } {
    this.resourceVersion = lease.metadata?.resourceVersion ?? '';
    this.renewedAt = Date.now();
    held.add(this);
    this.cluster.fence = (ref, what) => this.fenceCheck(ref, what);
    this.emit('lock', `${how} (holder ${this.o.runId})`);
    const every = Math.max(1, leaseSeconds() / 3) * 1000;
    this.timer = setInterval(() => { this.renewing ??= this.renew().finally(() => { this.renewing = undefined; }); }, every);
    this.timer.unref();
    return { state: 'taken' };
  }

  private async renew(): Promise<void> {
    if (this.lost || this.resourceVersion === undefined) return;
    try {
      const r = await this.cluster.mergePatch(this.ref, { metadata: { name: LOCK_NAME, namespace: this.o.namespace, resourceVersion: this.resourceVersion }, spec: { renewTime: microTime() } });
      this.resourceVersion = r.metadata?.resourceVersion ?? this.resourceVersion;
      this.renewedAt = Date.now();
      this.renewError = undefined;
    } catch (e) {
      this.renewError = (e as Error).message;
      if (e instanceof ApiError && (e.status === 409 || e.status === 404)) {
        const now = await this.cluster.get<V1Lease>(this.ref).catch(() => undefined);
        this.lost = now ? `the lock was taken over by ${describeHolder(holderOf(now))}` : 'the lock was removed (uyuni-cdk unlock?)';
        this.stopRenewing();
      }
      // anything else: try again at the next renewal (the lease lasts three of them)
    }
  }

  private stopRenewing(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Why this run may not write now (its lock taken, removed, or not renewed for a lease's length), or undefined. */
  private unfenced(): string | undefined {
    if (this.lost) return this.lost;
    if (!this.held) return undefined;
    const since = Date.now() - this.renewedAt;
    if (since <= leaseSeconds() * 1000) return undefined;
    return `its lock could not be renewed since ${new Date(this.renewedAt).toISOString()} (${this.renewError ?? 'no answer'}): `
      + `after leaseDurationSeconds (${leaseSeconds()}) another run may hold namespace ${this.o.namespace}`;
  }

  /**
   * The fence (Cluster.fence): before each write of the run, the lock is still its own. The
   * lock's own requests (its Lease) pass: renewing and releasing it are how it finds out.
   */
  private fenceCheck(ref: ObjectRef, what: string): void {
    if (ref.kind === 'Lease' && ref.name === LOCK_NAME && ref.namespace === this.o.namespace) return;
    const why = this.unfenced();
    if (why) throw new Locked(`${this.o.verb} ${this.o.runId} stopped before it would ${what} ${refString(ref)}: ${why}`);
  }

  /** Before a step: the lock is held (taken now if the namespace appeared), and still ours. */
  async beforeStep(step: Step): Promise<void> {
    const why = this.unfenced();
    if (why) throw new Locked(`${this.o.verb} ${this.o.runId} stopped before step ${step.name}: ${why}`);
    if (this.held) return;
    // the namespace is still missing: only the step that creates it may run unlocked
    const creates = step.objects.some((r) => r.kind === 'Namespace' && r.name === this.o.namespace);
    if (creates && this.namespaceMissing) return;
    if (await this.acquire()) return;
    if (!creates) throw new BadInput(`namespace ${this.o.namespace} does not exist, and step ${step.name} does not create it: create it, or run the plan that does`);
  }

  /** Deletes the Lease if it is still ours (best effort: a lock left behind expires). */
  async release(): Promise<void> {
    this.stopRenewing();
    held.delete(this);
    this.cluster.fence = undefined;
    await this.renewing?.catch(() => undefined);
    if (!this.held || this.lost) return;
    this.resourceVersion = undefined;
    // a run stopped by its deadline still releases its lock: a few seconds past it, for this request only
    const deadline = this.cluster.limits.deadline;
    this.cluster.limits.deadline = Date.now() + 5000;
    try {
      const now = await this.cluster.get<V1Lease>(this.ref);
      if (now && now.spec?.holderIdentity === this.o.runId && holderOf(now).pid === process.pid) {
        // no event: a run's last event is its run-done
        await this.cluster.delete(this.ref, 'Background');
      }
    } catch (e) {
      this.emit('unlock', `not released (${(e as Error).message}); it expires ${formatDuration(leaseSeconds())} after its last renewal`);
    } finally {
      this.cluster.limits.deadline = deadline;
    }
  }
}

/** Ctrl-C: release every lock this process holds, within `ms`. */
export async function releaseHeldLocks(ms = 3000): Promise<void> {
  const all = Promise.all([...held].map((l) => l.release().catch(() => undefined)));
  await Promise.race([all, new Promise((r) => setTimeout(r, ms).unref())]);
}

export interface UnlockOptions {
  /** `--force`: remove it although its holder runs on this host (then asked: `yes`, or `--yes`). */
  readonly force?: boolean;
  readonly yes?: boolean;
  readonly ask?: (question: string) => Promise<string>;
}

/**
 * `uyuni-cdk unlock -n NS RUN_ID`: deletes the namespace's lock when RUN_ID holds it; returns what
 * it removed. A holder that runs on this host (its pid alive, its Lease renewed) is refused
 * unless `--force`, and then asked first: removing a live run's lock lets a second run in while
 * the first stops only before its next write.
 */
export async function forceUnlock(cluster: Cluster, namespace: string, runId: string, o: UnlockOptions = {}): Promise<string> {
  const ref = leaseRef(namespace);
  const lease = await cluster.get<V1Lease>(ref);
  if (!lease) throw new BadInput(`namespace ${namespace} is not locked (no Lease ${LOCK_NAME})`);
  const h = holderOf(lease);
  if (h.runId !== runId && lease.spec?.holderIdentity !== runId) {
    throw new BadInput(`namespace ${namespace} is locked by ${describeHolder(h)}, not by ${runId}: nothing removed`);
  }
  const stale = staleness(lease);
  const alive = !stale && h.host === os.hostname() && h.pid > 0 && pidAlive(h.pid);
  if (alive) {
    const live = `${describeHolder(h)} is alive: pid ${h.pid} runs on this host and renews the lock`;
    if (!o.force) throw new BadInput(`${live}; nothing removed: wait for it, or stop it (Ctrl-C releases the lock). To remove it anyway: --force (asks first)`);
    const answer = o.yes ? 'yes' : o.ask ? (await o.ask(`${live}; removing its lock lets another run in while it stops only before its next write.\n  Only 'yes' will be accepted to approve.\n\n  Enter a value: `)).trim() : undefined;
    if (answer === undefined) throw new BadInput(`${live}; --force without a terminal to ask on: nothing removed; add --yes to remove it`);
    if (answer !== 'yes') throw new RuntimeError('not approved: nothing removed', EXIT.stepFailed);
  }
  await cluster.delete(ref, 'Background');
  return `removed the lock of namespace ${namespace}: ${describeHolder(h)}${stale ? ` (${stale})` : ' (it was still being renewed: if that run is alive, it stops before its next write)'}`;
}
