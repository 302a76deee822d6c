/**
 * A D-Bus client connection on a Unix socket, as far as the agent needs one: EXTERNAL
 * authentication, Hello, method calls matched to their replies, signals, and the end of the
 * connection reported once. Messages are written with dbus-wire.ts; the calls made in one tick
 * go out in one write.
 *
 * It replaced dbus-next, whose general-purpose marshalling (a signature parsed per message,
 * intermediate trees, many small buffers) was most of the agent's own time in a cleanup.
 */
import { EventEmitter } from 'events';
import * as net from 'net';
import { Call, decodeMessage, encodeCall, Message, MessageType, messageLength, WireError } from './dbus-wire';

/** An error the peer answered with: `type` is its D-Bus name (`org.freedesktop.systemd1.NoSuchUnit`). */
export class DBusError extends Error {
  constructor(readonly type: string, message: string) {
    super(message);
  }
}

/** The socket of a `unix:path=…` or `unix:abstract=…` address (the first usable entry of a `;` list). */
export function socketOf(address: string): string {
  for (const entry of address.split(';')) {
    const colon = entry.indexOf(':');
    if (entry.slice(0, colon) !== 'unix') continue;
    const keys = new Map(entry.slice(colon + 1).split(',').map((kv) => {
      const eq = kv.indexOf('=');
      return [kv.slice(0, eq), decodeURIComponent(kv.slice(eq + 1))] as [string, string];
    }));
    if (keys.get('path')) return keys.get('path')!;
    if (keys.get('abstract')) return `\0${keys.get('abstract')}`;
  }
  throw new Error(`the bus address ${JSON.stringify(address)} names no unix:path= or unix:abstract= socket`);
}

const MAX_MESSAGE = 128 * 1024 * 1024;

export class BusConnection extends EventEmitter {
  private serial = 1;
  private readonly pending = new Map<number, { resolve: (m: Message) => void; reject: (e: Error) => void }>();
  private queued: Buffer[] = [];
  private inbox: Buffer = Buffer.alloc(0);
  private ended = false;
  /** The unique name the bus daemon gave this connection. */
  uniqueName = '';

  private constructor(private readonly socket: net.Socket) {
    super();
  }

  /** `signal`: a signal the bus delivered. `lost`: the connection ended without close(), `reason` says how; emitted once. */
  override on(event: 'signal', listener: (msg: Message) => void): this;
  override on(event: 'lost', listener: (reason: string) => void): this;
  override on(event: string, listener: Parameters<EventEmitter['on']>[1]): this {
    return super.on(event, listener);
  }

  /** Connects, authenticates and says Hello; rejects with what went wrong (the socket's words). */
  static connect(address: string): Promise<BusConnection> {
    return new Promise((resolve, reject) => {
      let socketPath: string;
      try {
        socketPath = socketOf(address);
      } catch (e) {
        reject(e);
        return;
      }
      const socket = net.createConnection({ path: socketPath });
      const conn = new BusConnection(socket);
      let line = '';
      const fail = (e: Error): void => {
        socket.destroy();
        reject(e);
      };
      socket.once('error', fail);
      socket.once('close', () => fail(new Error('the bus closed the connection during authentication')));
      socket.once('connect', () => {
        const uid = Buffer.from(String(process.getuid?.() ?? 0)).toString('hex');
        socket.write(`\0AUTH EXTERNAL ${uid}\r\n`);
      });
      const onAuth = (chunk: Buffer): void => {
        line += chunk.toString('latin1');
        const end = line.indexOf('\r\n');
        if (end < 0) {
          if (line.length > 4096) fail(new Error('the bus sent no line end during authentication'));
          return;
        }
        const answer = line.slice(0, end);
        if (!answer.startsWith('OK ')) return fail(new Error(`the bus refused the authentication: ${answer}`));
        socket.off('data', onAuth);
        socket.removeAllListeners('error');
        socket.removeAllListeners('close');
        socket.write('BEGIN\r\n');
        conn.attach();
        const rest = Buffer.from(line.slice(end + 2), 'latin1');
        if (rest.length) conn.receive(rest);
        conn.call({ destination: 'org.freedesktop.DBus', path: '/org/freedesktop/DBus', interface: 'org.freedesktop.DBus', member: 'Hello' }).then((reply) => {
          conn.uniqueName = String(reply.body[0] ?? '');
          resolve(conn);
        }, (e: Error) => {
          conn.close();
          reject(new Error(`Hello: ${e.message}`));
        });
      };
      socket.on('data', onAuth);
    });
  }

  private attach(): void {
    this.socket.on('data', (chunk: Buffer) => this.receive(chunk));
    this.socket.on('error', (e) => this.lose(e.message));
    this.socket.on('end', () => this.lose('the bus closed it'));
    this.socket.on('close', () => this.lose('the socket closed'));
  }

  private receive(chunk: Buffer): void {
    this.inbox = this.inbox.length ? Buffer.concat([this.inbox, chunk]) : chunk;
    try {
      for (;;) {
        const length = messageLength(this.inbox);
        if (length === undefined || this.inbox.length < length) break;
        if (length > MAX_MESSAGE) throw new WireError(`a message of ${length} bytes`);
        const msg = decodeMessage(this.inbox.subarray(0, length));
        this.inbox = this.inbox.subarray(length);
        this.dispatch(msg);
      }
    } catch (e) {
      // The stream cannot be resynchronised after a message it cannot read.
      this.lose(`a message from the bus could not be read: ${(e as Error).message}`);
      this.socket.destroy();
    }
  }

  private dispatch(msg: Message): void {
    if (msg.type === MessageType.METHOD_RETURN || msg.type === MessageType.ERROR) {
      const waiter = msg.replySerial === undefined ? undefined : this.pending.get(msg.replySerial);
      if (!waiter) return;
      this.pending.delete(msg.replySerial!);
      if (msg.type === MessageType.ERROR) {
        waiter.reject(new DBusError(msg.errorName ?? 'org.freedesktop.DBus.Error.Failed', typeof msg.body[0] === 'string' ? msg.body[0] : msg.errorName ?? 'error'));
      } else {
        waiter.resolve(msg);
      }
    } else if (msg.type === MessageType.SIGNAL) {
      this.emit('signal', msg);
    }
    // Method calls to us (a peer's Ping) are not answered: the agent exports nothing.
  }

  private lose(reason: string): void {
    if (this.ended) return;
    this.ended = true;
    const e = new Error(`the connection to the bus ended (${reason})`);
    for (const waiter of this.pending.values()) waiter.reject(e);
    this.pending.clear();
    this.emit('lost', reason);
  }

  /** Sends a method call; resolves with the reply, rejects with a DBusError or the connection's end. */
  call(call: Call): Promise<Message> {
    if (this.ended) return Promise.reject(new Error('the connection to the bus has ended'));
    const serial = this.serial;
    this.serial = this.serial >= 0xffffffff ? 1 : this.serial + 1;
    let bytes: Buffer;
    try {
      bytes = encodeCall(serial, call);
    } catch (e) {
      return Promise.reject(e);
    }
    return new Promise((resolve, reject) => {
      this.pending.set(serial, { resolve, reject });
      this.write(bytes);
    });
  }

  /** Queues `bytes`; what is queued in one tick is written at once. */
  private write(bytes: Buffer): void {
    this.queued.push(bytes);
    if (this.queued.length > 1) return;
    process.nextTick(() => {
      const out = this.queued.length === 1 ? this.queued[0] : Buffer.concat(this.queued);
      this.queued = [];
      if (!this.ended) this.socket.write(out);
    });
  }

  /** Ends the connection; pending calls are rejected. Not reported as lost. */
  close(): void {
    if (!this.ended) {
      this.ended = true;
      const e = new Error('the connection to the bus was closed');
      for (const waiter of this.pending.values()) waiter.reject(e);
      this.pending.clear();
    }
    this.socket.destroy();
  }
}
