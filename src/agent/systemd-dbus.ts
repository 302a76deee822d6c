/**
 * The systemd manager over D-Bus, through dbus-next's low-level API: `bus.call(new Message(...))`
 * for method calls, `AddMatch` for the signals wanted, `bus.on('message')` to receive them. No
 * proxy objects, no introspection: one round trip per call, with the method names of the upstream
 * API (org.freedesktop.systemd1.Manager). Every call and every job wait has a timeout. A
 * connection the bus closes or breaks is reported once (`lost`) and fails every pending and later
 * call at once.
 */
import * as dbus from 'dbus-next';

const DEST = 'org.freedesktop.systemd1';
const MANAGER_PATH = '/org/freedesktop/systemd1';
const MANAGER = 'org.freedesktop.systemd1.Manager';
export const UNIT_IFACE = 'org.freedesktop.systemd1.Unit';
export const SERVICE_IFACE = 'org.freedesktop.systemd1.Service';
const PROPERTIES = 'org.freedesktop.DBus.Properties';
const JOB_REMOVED_MATCH = `type='signal',sender='${DEST}',path='${MANAGER_PATH}',interface='${MANAGER}',member='JobRemoved'`;
const UNIT_PATHS = `${MANAGER_PATH}/unit`;
const PROPERTIES_CHANGED_MATCH = `type='signal',sender='${DEST}',interface='${PROPERTIES}',member='PropertiesChanged',path_namespace='${UNIT_PATHS}'`;

/** A unit's PropertiesChanged signal: its object path, the interface, the new values, the names whose values were only invalidated. */
export type PropertiesChangedHandler = (path: string, iface: string, changed: Record<string, unknown>, invalidated: string[]) => void;

export class SystemdError extends Error {}

/** The bus closed or broke the connection: no call can be answered any more. */
export class BusLostError extends SystemdError {
  constructor(
    /** `the session bus (unix:path=...)` */
    readonly bus: string,
    /** What the socket reported. */
    readonly reason: string,
  ) {
    super(`the connection to ${bus} was lost (${reason})`);
  }
}

/** JobRemoved results remembered before anyone waits for them. */
const MAX_FINISHED_JOBS = 4096;

/**
 * A unit's object path, as systemd derives it (bus_label_escape): every byte other than an ASCII
 * letter or digit (and a leading digit) becomes `_xx`. Saves a LoadUnit round trip per unit;
 * systemd loads the unit when its path is accessed.
 */
export function unitObjectPath(name: string): string {
  let label = '';
  for (const [i, byte] of Buffer.from(name, 'utf8').entries()) {
    const c = String.fromCharCode(byte);
    label += /[A-Za-z]/.test(c) || (i > 0 && /[0-9]/.test(c)) ? c : `_${byte.toString(16).padStart(2, '0')}`;
  }
  return `${MANAGER_PATH}/unit/${label || '_'}`;
}

export interface ConnectOptions {
  /** The user manager on the session bus (`DBUS_SESSION_BUS_ADDRESS`) instead of the system bus. */
  readonly session: boolean;
  /** Explicit bus address (`unix:path=...`); overrides the environment. */
  readonly address?: string;
  /** Upper bound for one method call. @default 30000 */
  readonly callTimeoutMs?: number;
}

/** `promise`, or a SystemdError after `ms` (connecting; the calls have their own, in send()). */
function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new SystemdError(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The address the manager is reached at, also to name the bus in messages. */
function busAddress(options: ConnectOptions): string {
  if (options.address) return options.address;
  if (options.session) return process.env.DBUS_SESSION_BUS_ADDRESS ?? '';
  return process.env.DBUS_SYSTEM_BUS_ADDRESS || 'unix:path=/var/run/dbus/system_bus_socket';
}

/**
 * The socket under a MessageBus. dbus-next forwards the socket's errors as the bus's 'error' but
 * not its end, which is how a bus that goes away (dbus-daemon killed or restarted) shows itself;
 * `_connection.stream` is not in its types.
 */
type BusSocket = NodeJS.EventEmitter & { cork?(): void; uncork?(): void };
function busStream(bus: dbus.MessageBus): BusSocket | undefined {
  return (bus as unknown as { _connection?: { stream?: BusSocket } })._connection?.stream;
}

/** The name of a D-Bus error (`org.freedesktop.systemd1.NoSuchUnit`), if it is one. */
export function dbusErrorName(e: unknown): string | undefined {
  const type = (e as { type?: unknown })?.type;
  return typeof type === 'string' ? type : undefined;
}

export class SystemdManager {
  private readonly finishedJobs = new Map<string, string>();
  private readonly jobWaiters = new Map<string, { resolve: (result: string) => void; reject: (e: Error) => void }>();
  private propertiesChanged?: PropertiesChangedHandler;
  private closing = false;
  private lostError?: BusLostError;
  private reportLost!: (e: BusLostError) => void;
  /**
   * Settles once, with the reason, when the bus closes or breaks the connection (not on close()).
   * systemd's answers and signals can no longer arrive: the caller has to connect anew.
   */
  readonly lost: Promise<BusLostError> = new Promise((resolve) => { this.reportLost = resolve; });
  private readonly stream?: BusSocket;
  /** Writes are being collected until the end of this tick (batchWrites). */
  private corked = false;
  private watchingJobs = false;
  /**
   * The calls awaiting their answer, each failed with the loss: dbus-next leaves the calls pending
   * on a connection that ended. (Each call used to race one promise of the loss instead, which
   * added a reaction to that promise per call that held the call's answer for the life of the
   * connection: ~800 replies and their 40,000 Variants in an idle agent with 100 pods, issue 36.)
   */
  private readonly pendingCalls = new Set<(e: Error) => void>();

  private constructor(
    private readonly bus: dbus.MessageBus,
    private readonly callTimeoutMs: number,
    busName: string,
  ) {
    const lose = (why: string): void => {
      if (this.closing || this.lostError) return;
      this.lostError = new BusLostError(busName, why);
      for (const waiter of this.jobWaiters.values()) waiter.reject(this.lostError);
      this.jobWaiters.clear();
      for (const fail of [...this.pendingCalls]) fail(this.lostError);
      this.reportLost(this.lostError);
    };
    // The socket's own events. The bus's 'error' also carries a message dbus-next could not read,
    // which it skips (the stream goes on): that call times out, the connection is not lost.
    const stream = busStream(bus);
    this.stream = stream;
    bus.on('error', (err: Error) => { if (!stream) lose(err.message); });
    stream?.on('error', (err: Error) => lose(err.message));
    stream?.on('end', () => lose('the bus closed it'));
    stream?.on('close', () => lose('the socket closed'));
    bus.on('message', (msg: dbus.Message) => {
      if (msg.type !== dbus.MessageType.SIGNAL) return;
      if (msg.interface === PROPERTIES && msg.member === 'PropertiesChanged' && msg.path?.startsWith(`${UNIT_PATHS}/`)) {
        const [iface, changed, invalidated] = msg.body as [string, Record<string, dbus.Variant>, string[]];
        this.propertiesChanged?.(msg.path, iface, Object.fromEntries(Object.entries(changed).map(([k, v]) => [k, v.value])), invalidated);
        return;
      }
      if (msg.interface !== MANAGER || msg.member !== 'JobRemoved') return;
      const [, job, , result] = msg.body as [unknown, string, string, string];
      const waiter = this.jobWaiters.get(job);
      if (waiter) {
        this.jobWaiters.delete(job);
        waiter.resolve(result);
      } else {
        // Kept for a waitForJob that comes just after its StopUnit returned; jobs nobody waits for
        // (StartUnit's, other units') must not pile up in a long-running agent.
        this.finishedJobs.set(job, result);
        if (this.finishedJobs.size > MAX_FINISHED_JOBS) this.finishedJobs.delete(this.finishedJobs.keys().next().value as string);
      }
    });
  }

  static async connect(options: ConnectOptions): Promise<SystemdManager> {
    const callTimeoutMs = options.callTimeoutMs ?? 30_000;
    const which = options.session ? 'session' : 'system';
    const address = busAddress(options);
    const busName = `the ${which} bus (${address || 'no address'})`;
    if (!address) throw new SystemdError('--session needs DBUS_SESSION_BUS_ADDRESS (the user manager\'s bus)');
    let bus: dbus.MessageBus;
    try {
      // An explicit address: sessionBus() is dbus-next's "connect to this address"; systemBus() would ignore it.
      bus = dbus.sessionBus({ busAddress: address });
    } catch (e) {
      throw new SystemdError(`cannot connect to the ${which} bus: ${(e as Error).message}`);
    }
    // Connected once Hello is answered ('connect'); the socket's error (ENOENT, refused, auth) before that.
    const connected = new Promise<void>((resolve, reject) => {
      bus.once('connect', () => resolve());
      bus.once('error', (err: Error) => reject(new SystemdError(`cannot connect to the ${which} bus: ${err.message}`)));
    });
    try {
      await withTimeout(connected, callTimeoutMs, `connecting to the ${which} bus`);
    } catch (e) {
      bus.on('error', () => undefined); // what the socket says while it closes changes nothing
      bus.disconnect();
      throw e;
    }
    return new SystemdManager(bus, callTimeoutMs, busName);
  }

  private async call(path: string, iface: string, member: string, signature = '', body: unknown[] = []): Promise<unknown[]> {
    const msg = new dbus.Message({ destination: DEST, path, interface: iface, member, signature, body });
    const reply = await this.send(msg, () => `${member}(${body.map((b) => JSON.stringify(b)).join(', ')})`);
    return reply?.body ?? [];
  }

  private send(msg: dbus.Message, what: () => string): Promise<dbus.Message | null> {
    if (this.lostError) return Promise.reject(this.lostError);
    let answer: Promise<dbus.Message | null>;
    try {
      this.batchWrites();
      answer = this.bus.call(msg);
    } catch (e) {
      // dbus-next throws when it writes to a socket that already closed.
      return Promise.reject(this.lostError ?? e);
    }
    // Settled by the answer, the timeout or the loss, whichever is first; nothing of it is kept after.
    return new Promise<dbus.Message | null>((resolve, reject) => {
      const fail = (e: Error): void => {
        settle();
        reject(e);
      };
      const timer = setTimeout(() => fail(new SystemdError(`${what()}: no answer within ${this.callTimeoutMs} ms`)), this.callTimeoutMs);
      const settle = (): void => {
        clearTimeout(timer);
        this.pendingCalls.delete(fail);
      };
      this.pendingCalls.add(fail);
      answer.then((reply) => {
        settle();
        resolve(reply);
      }, fail);
    });
  }

  /**
   * dbus-next writes each message to the socket as it is sent: one write(2) per call, which was the
   * largest single cost of a cleanup's 500 calls (~0.2 s of its CPU). The socket is corked until the
   * end of the tick instead, so the calls made in one tick go out in one writev(2).
   */
  private batchWrites(): void {
    const stream = this.stream;
    if (this.corked || !stream?.cork || !stream.uncork) return;
    this.corked = true;
    stream.cork();
    process.nextTick(() => {
      this.corked = false;
      stream.uncork!();
    });
  }

  private manager(member: string, signature = '', body: unknown[] = []): Promise<unknown[]> {
    return this.call(MANAGER_PATH, MANAGER, member, signature, body);
  }

  /**
   * Receives the JobRemoved signals of the jobs this connection queues, without Subscribe():
   * systemd sends a job's signals to the client that queued it (the job tracks its sender) even
   * when nobody is subscribed (src/core/dbus.c bus_foreach_bus, src/core/dbus-job.c); the bus
   * delivers them to us through this match. Subscribed, systemd would also send every unit's
   * PropertiesChanged signals while the units stop and reload, which cost the cleanup a fifth of its
   * time. Call it before any StopUnit, so no JobRemoved is missed.
   */
  async watchJobs(): Promise<void> {
    if (this.watchingJobs) return;
    await this.addMatch(JOB_REMOVED_MATCH);
    this.watchingJobs = true;
  }

  /** Asks the bus daemon for the signals matching `rule`. */
  private async addMatch(rule: string): Promise<void> {
    const msg = new dbus.Message({ destination: 'org.freedesktop.DBus', path: '/org/freedesktop/DBus', interface: 'org.freedesktop.DBus', member: 'AddMatch', signature: 's', body: [rule] });
    await this.send(msg, () => `AddMatch(${rule})`);
  }

  /** Asks the manager to send JobRemoved and the other Manager signals (every unit's changes among them) to us. */
  async Subscribe(): Promise<void> {
    await this.watchJobs();
    await this.manager('Subscribe');
  }

  /**
   * Delivers the PropertiesChanged signals of every unit object to `handler` (systemd sends them
   * to subscribers, so Subscribe() as well). Unit state then comes from signals, not polling.
   */
  async watchUnitProperties(handler: PropertiesChangedHandler): Promise<void> {
    this.propertiesChanged = handler;
    await this.addMatch(PROPERTIES_CHANGED_MATCH);
  }

  /** Every property of one interface of an object, values unwrapped. */
  async getAllProperties(path: string, iface: string): Promise<Record<string, unknown>> {
    const [all] = (await this.call(path, PROPERTIES, 'GetAll', 's', [iface])) as [Record<string, dbus.Variant>];
    return Object.fromEntries(Object.entries(all ?? {}).map(([k, v]) => [k, v.value]));
  }

  async Reload(): Promise<void> {
    await this.manager('Reload');
  }

  /** The object path of a unit, loading it (from its file) when it is not loaded yet. */
  async LoadUnit(name: string): Promise<string> {
    return (await this.manager('LoadUnit', 's', [name]))[0] as string;
  }

  async ListUnitsByPatterns(states: string[], patterns: string[]): Promise<Array<{ name: string; activeState: string; subState: string; path: string }>> {
    const [units] = (await this.manager('ListUnitsByPatterns', 'asas', [states, patterns])) as [unknown[][]];
    return units.map((u) => ({ name: u[0] as string, activeState: u[3] as string, subState: u[4] as string, path: u[6] as string }));
  }

  async getProperty(path: string, iface: string, property: string): Promise<unknown> {
    const [variant] = (await this.call(path, PROPERTIES, 'Get', 'ss', [iface, property])) as [dbus.Variant];
    return variant.value;
  }

  /** Queues a job; returns its object path. */
  async StartUnit(name: string, mode = 'replace'): Promise<string> {
    return (await this.manager('StartUnit', 'ss', [name, mode]))[0] as string;
  }

  async StopUnit(name: string, mode = 'replace'): Promise<string> {
    return (await this.manager('StopUnit', 'ss', [name, mode]))[0] as string;
  }

  /** The result of a job (`done`, `canceled`, `timeout`, `failed`, ...) from its JobRemoved signal. */
  waitForJob(job: string, timeoutMs: number): Promise<string> {
    const known = this.finishedJobs.get(job);
    if (known !== undefined) {
      this.finishedJobs.delete(job);
      return Promise.resolve(known);
    }
    if (this.lostError) return Promise.reject(this.lostError);
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.jobWaiters.delete(job);
        reject(new SystemdError(`job ${job} did not finish within ${timeoutMs} ms`));
      }, timeoutMs);
      this.jobWaiters.set(job, {
        resolve: (result) => {
          clearTimeout(timer);
          resolve(result);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
    });
  }

  /** Sends `signal` to the unit's processes (`who`: main, control or all). */
  async KillUnit(name: string, who: 'main' | 'control' | 'all', signal: number): Promise<void> {
    await this.manager('KillUnit', 'ssi', [name, who, signal]);
  }

  async RestartUnit(name: string, mode = 'replace'): Promise<string> {
    return (await this.manager('RestartUnit', 'ss', [name, mode]))[0] as string;
  }

  async ResetFailedUnit(name: string): Promise<void> {
    await this.manager('ResetFailedUnit', 's', [name]);
  }

  async EnableUnitFiles(names: string[], runtime = false, force = true): Promise<void> {
    await this.manager('EnableUnitFiles', 'asbb', [names, runtime, force]);
  }

  async DisableUnitFiles(names: string[], runtime = false): Promise<void> {
    await this.manager('DisableUnitFiles', 'asb', [names, runtime]);
  }

  close(): void {
    this.closing = true;
    for (const waiter of this.jobWaiters.values()) waiter.resolve('canceled');
    this.jobWaiters.clear();
    this.bus.disconnect();
  }
}
