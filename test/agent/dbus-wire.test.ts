/**
 * The agent's own D-Bus client (src/agent/dbus-wire.ts, dbus-connection.ts), held against an
 * independent implementation: dbus-next (a devDependency the test harness also uses) reads what
 * we write and writes what we read. The real dbus-daemon and systemd --user are the agent's
 * systemd tests (cleanup, run, bus-loss).
 */
import * as fs from 'fs';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';
import { BusConnection, DBusError, socketOf } from '../../src/agent/dbus-connection';
import { BusLostError, SystemdManager } from '../../src/agent/systemd-dbus';
import { decodeMessage, encodeCall, Message, messageLength, parseSignature, Variant, WireError } from '../../src/agent/dbus-wire';

// dbus-next's own marshaller and parser (not its public API: the functions its connection uses).
const dbusNext = require('dbus-next') as typeof import('dbus-next');
const { marshallMessage, messageToJsFmt } = require('dbus-next/lib/marshall-compat');
const DBusBuffer = require('dbus-next/lib/dbus-buffer');
const { headerTypeName } = require('dbus-next/lib/constants');

jest.setTimeout(15_000);

/**
 * What dbus-next reads from our bytes, in its own JS format: its `unmarshall` (lib/message.js),
 * with its stream parser's guard for a message without a body, which `unmarshall` lacks.
 */
function readByDbusNext(bytes: Buffer): Record<string, unknown> {
  const buf = new DBusBuffer(bytes, 0, bytes[0], null, {});
  const headers = buf.read('yyyyuua(yv)');
  const message: Record<string, unknown> = { type: headers[1], flags: headers[2], serial: headers[5] };
  for (const [code, value] of headers[6]) message[headerTypeName[code]] = value[1][0];
  buf.align(3);
  message.body = headers[4] > 0 && message.signature ? buf.read(message.signature) : [];
  return messageToJsFmt(message);
}

/** A message as dbus-next writes it. */
function writtenByDbusNext(msg: Record<string, unknown>): Buffer {
  return marshallMessage({ ...msg })[0];
}

const v = (signature: string, value: unknown) => new dbusNext.Variant(signature, value);
const plain = (x: unknown): unknown => (x instanceof Object && 'signature' in x && 'value' in x ? plain((x as Variant).value) : x);

describe('writing method calls', () => {
  const calls = [
    { member: 'Reload', signature: '', body: [] },
    { member: 'LoadUnit', signature: 's', body: ['system-stackable.slice'] },
    { member: 'StopUnit', signature: 'ss', body: ['web-svc.service', 'replace'] },
    { member: 'EnableUnitFiles', signature: 'asbb', body: [['a.service', 'b-ü.service'], false, true] },
    { member: 'DisableUnitFiles', signature: 'asb', body: [[], false] },
    { member: 'ListUnitsByPatterns', signature: 'asas', body: [['active'], ['bench-*']] },
    { member: 'KillUnit', signature: 'ssi', body: ['web.service', 'all', 9] },
    // Object keys are strings: a 64-bit key beyond 2^53 keeps every digit, a boolean key its value.
    { member: 'Keys', signature: 'a{ts}a{bs}', body: [{ '9223372036854775809': 'big' }, { true: 'yes', false: 'no' }] },
    { member: 'Typed', signature: 'ynqiuxtdgoa{su}(sb)ay', body: [255, -2, 65535, -123456, 4294967295, -(2n ** 63n), 2n ** 64n - 1n, 0.5, 'a(sv)', '/org/x_2', { one: 1, two: 2 }, ['s', true], Buffer.from([0, 1, 2])] },
  ];

  it.each(calls)('dbus-next reads $member($signature) as we meant it', (call) => {
    const bytes = encodeCall(41, { destination: 'org.freedesktop.systemd1', path: '/org/freedesktop/systemd1', interface: 'org.freedesktop.systemd1.Manager', ...call });
    expect(messageLength(bytes)).toBe(bytes.length);
    const read = readByDbusNext(bytes);
    expect(read).toMatchObject({
      type: 1, serial: 41, destination: 'org.freedesktop.systemd1', path: '/org/freedesktop/systemd1',
      interface: 'org.freedesktop.systemd1.Manager', member: call.member, signature: call.signature,
    });
    expect(read.body).toEqual(call.body);
  });

  it('refuses what the bus would disconnect for, before anything is written', () => {
    const base = { destination: 'd', path: '/p', member: 'M' };
    expect(() => encodeCall(1, { ...base, path: '/bad-path' })).toThrow(WireError);
    expect(() => encodeCall(1, { ...base, path: 'relative' })).toThrow(/not an object path/);
    expect(() => encodeCall(1, { ...base, signature: 's', body: ['nul\0inside'] })).toThrow(/NUL/);
    expect(() => encodeCall(1, { ...base, signature: 'ss', body: ['one'] })).toThrow(/needs 2 values, got 1/);
    expect(() => encodeCall(1, { ...base, signature: 'i', body: [2 ** 31] })).toThrow(/not an integer/);
    expect(() => encodeCall(1, { ...base, signature: 'v', body: [1] })).toThrow(/variants/);
    expect(() => parseSignature('a{vs}')).toThrow(/dict entry/);
    expect(() => parseSignature('(s')).toThrow(/does not close/);
    expect(() => parseSignature('a')).toThrow(/ends inside/);
  });
});

describe('reading what the bus sends', () => {
  it('reads a unit\'s PropertiesChanged signal with variants of every kind systemd sends', () => {
    const changed = {
      ActiveState: v('s', 'active'),
      ExecMainStartTimestamp: v('t', 1_700_000_000_123_456n),
      ExecMainStatus: v('i', -3),
      NRestarts: v('u', 2),
      Slice: v('o', '/org/freedesktop/systemd1/unit/system_2dstackable_2eslice'),
      Environment: v('as', ['A=1', 'B=two words']),
      Transient: v('b', false),
      ExecStart: v('a(sasbttttuii)', [['/bin/sleep', ['sleep', '1d'], false, 1n, 2n, 3n, 4n, 42, 1, 0]]),
      Nested: v('v', v('s', 'inner')),
      Bytes: v('ay', Buffer.from('xyz')),
    };
    const bytes = writtenByDbusNext({
      type: 4, serial: 9, path: '/org/freedesktop/systemd1/unit/web_2eservice', interface: 'org.freedesktop.DBus.Properties',
      member: 'PropertiesChanged', sender: ':1.1', signature: 'sa{sv}as', body: ['org.freedesktop.systemd1.Service', changed, ['MainPID']],
    });
    const msg = decodeMessage(bytes);
    expect(msg).toMatchObject({ type: 4, serial: 9, path: '/org/freedesktop/systemd1/unit/web_2eservice', member: 'PropertiesChanged', sender: ':1.1', signature: 'sa{sv}as' });
    const [iface, props, invalidated] = msg.body as [string, Record<string, Variant>, string[]];
    expect([iface, invalidated]).toEqual(['org.freedesktop.systemd1.Service', ['MainPID']]);
    expect(Object.fromEntries(Object.entries(props).map(([k, x]) => [k, plain(x)]))).toEqual({
      ActiveState: 'active', ExecMainStartTimestamp: 1_700_000_000_123_456n, ExecMainStatus: -3, NRestarts: 2,
      Slice: '/org/freedesktop/systemd1/unit/system_2dstackable_2eslice', Environment: ['A=1', 'B=two words'], Transient: false,
      ExecStart: [['/bin/sleep', ['sleep', '1d'], false, 1n, 2n, 3n, 4n, 42, 1, 0]], Nested: 'inner', Bytes: Buffer.from('xyz'),
    });
    expect(props.ExecStart.signature).toBe('a(sasbttttuii)');
  });

  it('reads replies and errors with their reply serial and error name', () => {
    const reply = decodeMessage(writtenByDbusNext({ type: 2, serial: 5, replySerial: 41, signature: 'o', body: ['/org/freedesktop/systemd1/job/7'] }));
    expect(reply).toMatchObject({ type: 2, replySerial: 41, body: ['/org/freedesktop/systemd1/job/7'] });
    const error = decodeMessage(writtenByDbusNext({ type: 3, serial: 6, replySerial: 42, errorName: 'org.freedesktop.systemd1.NoSuchUnit', signature: 's', body: ['Unit x.service not loaded.'] }));
    expect(error).toMatchObject({ type: 3, replySerial: 42, errorName: 'org.freedesktop.systemd1.NoSuchUnit', body: ['Unit x.service not loaded.'] });
    const empty = decodeMessage(writtenByDbusNext({ type: 2, serial: 7, replySerial: 43 }));
    expect([empty.signature, empty.body]).toEqual(['', []]);
  });

  it('reads a big-endian message', () => {
    // 'B', METHOD_RETURN, flags 1, version 1, body 4 bytes, serial 7; REPLY_SERIAL u 3, SIGNATURE g "u"; body u 0x01020304.
    const bytes = Buffer.from([
      0x42, 2, 1, 1, 0, 0, 0, 4, 0, 0, 0, 7, 0, 0, 0, 15,
      5, 1, 0x75, 0, 0, 0, 0, 3,
      8, 1, 0x67, 0, 1, 0x75, 0, 0,
      1, 2, 3, 4,
    ]);
    expect(messageLength(bytes)).toBe(bytes.length);
    expect(decodeMessage(bytes)).toMatchObject({ type: 2, flags: 1, serial: 7, replySerial: 3, signature: 'u', body: [0x01020304] });
  });

  it('refuses a message whose sizes do not add up', () => {
    const good = writtenByDbusNext({ type: 2, serial: 5, replySerial: 41, signature: 's', body: ['hello'] });
    const longer = Buffer.concat([good, Buffer.alloc(8)]);
    expect(() => decodeMessage(longer)).toThrow(/body length does not match/);
    const lying = Buffer.from(good);
    lying.writeUInt32LE(2 ** 20, good.length - 10); // the string's length now runs past the end
    expect(() => decodeMessage(lying)).toThrow(WireError);
    expect(() => messageLength(Buffer.from('x'.repeat(16)))).toThrow(/endianness/);
  });
});

describe('socketOf', () => {
  it('takes the first unix socket of an address list, unescaping its value', () => {
    expect(socketOf('unix:path=/run/user/0/bus')).toBe('/run/user/0/bus');
    expect(socketOf('tcp:host=x,port=1;unix:path=/tmp/a%20b,guid=0123')).toBe('/tmp/a b');
    expect(socketOf('unix:abstract=/tmp/dbus-XYZ,guid=1')).toBe('\0/tmp/dbus-XYZ');
    expect(() => socketOf('tcp:host=localhost,port=1')).toThrow(/names no unix:path=/);
  });
});

/**
 * A bus daemon for one client, just enough of one: it reads with dbus-next, answers Hello,
 * echoes `Echo`, fails `Fail`, and can send signals in pieces or end the connection.
 */
async function fakeBus(auth: 'ok' | 'reject' = 'ok') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'uyuni-cdk-bus-'));
  const socketPath = path.join(dir, 'bus');
  const received: Array<Record<string, unknown>> = [];
  let client: net.Socket | undefined;
  let serial = 100;
  /** Of each message received, the number of the socket read that completed it. */
  const reads: number[] = [];
  const server = net.createServer((s) => {
    client = s;
    let read = 0;
    let buf = Buffer.alloc(0);
    let begun = false;
    s.on('data', (chunk) => {
      read++;
      buf = Buffer.concat([buf, chunk]);
      if (!begun) {
        const text = buf.toString('latin1');
        if (text.includes('AUTH EXTERNAL') && !text.includes('BEGIN') && text.endsWith('\r\n') && !text.includes('\r\nBEGIN')) {
          s.write(auth === 'ok' ? 'OK 0123456789abcdef0123456789abcdef\r\n' : 'REJECTED EXTERNAL\r\n');
          if (auth === 'reject') s.end();
        }
        const at = text.indexOf('BEGIN\r\n');
        if (at < 0) return;
        begun = true;
        buf = buf.subarray(at + 7);
      }
      for (;;) {
        const length = buf.length >= 16 ? messageLength(buf) : undefined;
        if (length === undefined || buf.length < length) return;
        const msg = readByDbusNext(buf.subarray(0, length));
        buf = buf.subarray(length);
        received.push(msg);
        reads.push(read);
        const answer = (m: Record<string, unknown>) => s.write(writtenByDbusNext({ serial: serial++, replySerial: msg.serial, ...m }));
        if (msg.member === 'Hello') answer({ type: 2, signature: 's', body: [':1.42'] });
        else if (msg.member === 'Echo') answer({ type: 2, signature: msg.signature, body: msg.body });
        else if (msg.member === 'Fail') answer({ type: 3, errorName: 'org.example.Error.Nope', signature: 's', body: ['nope, really'] });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return {
    address: `unix:path=${socketPath}`,
    received,
    reads,
    /** Writes a signal one byte at a time. */
    async trickleSignal(member: string, signature: string, body: unknown[]) {
      const bytes = writtenByDbusNext({ type: 4, serial: serial++, path: '/org/example', interface: 'org.example.Iface', member, signature, body });
      for (const b of bytes) {
        client!.write(Buffer.from([b]));
        await new Promise((r) => setImmediate(r));
      }
    },
    hangUp: () => client!.end(),
    close: async () => {
      client?.destroy();
      await new Promise((r) => server.close(r));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Runs `test` with a fake bus and a connection to it, closing both after. */
async function withConnection(test: (bus: Awaited<ReturnType<typeof fakeBus>>, conn: BusConnection) => Promise<void>): Promise<void> {
  const bus = await fakeBus();
  const conn = await BusConnection.connect(bus.address);
  try {
    await test(bus, conn);
  } finally {
    conn.close();
    await bus.close();
  }
}

describe('BusConnection', () => {
  it('authenticates, says Hello, matches replies to calls and batches the calls of one tick', () => withConnection(async (bus, conn) => {
    expect(conn.uniqueName).toBe(':1.42');
    const answers = await Promise.all([
      conn.call({ destination: 'org.example', path: '/a', member: 'Echo', signature: 's', body: ['first'] }),
      conn.call({ destination: 'org.example', path: '/a', member: 'Echo', signature: 'asb', body: [['x', 'y'], true] }),
      conn.call({ destination: 'org.example', path: '/a', member: 'Fail' }).catch((e) => e),
    ]);
    expect(answers[0].body).toEqual(['first']);
    expect(answers[1].body).toEqual([['x', 'y'], true]);
    expect(answers[2]).toBeInstanceOf(DBusError);
    expect([(answers[2] as DBusError).type, (answers[2] as DBusError).message]).toEqual(['org.example.Error.Nope', 'nope, really']);
    expect(bus.received.map((m) => m.member)).toEqual(['Hello', 'Echo', 'Echo', 'Fail']);
    // Distinct serials, each answered; the three calls of one tick came in one write, after Hello's.
    expect(new Set(bus.received.map((m) => m.serial)).size).toBe(4);
    expect(bus.reads.slice(1)).toEqual([bus.reads[1], bus.reads[1], bus.reads[1]]);
    expect(bus.reads[1]).toBeGreaterThan(bus.reads[0]);
  }));

  it('reassembles a signal that arrives a byte at a time', () => withConnection(async (bus, conn) => {
    const signals: Message[] = [];
    conn.on('signal', (m: Message) => signals.push(m));
    await bus.trickleSignal('JobRemoved', 'uoss', [7, '/org/freedesktop/systemd1/job/7', 'web.service', 'done']);
    await bus.trickleSignal('JobRemoved', 'uoss', [8, '/org/freedesktop/systemd1/job/8', 'db.service', 'canceled']);
    expect(signals.map((m) => [m.member, m.body])).toEqual([
      ['JobRemoved', [7, '/org/freedesktop/systemd1/job/7', 'web.service', 'done']],
      ['JobRemoved', [8, '/org/freedesktop/systemd1/job/8', 'db.service', 'canceled']],
    ]);
  }));

  it('reports the end of the connection once and fails the calls still waiting', () => withConnection(async (bus, conn) => {
    const lost: string[] = [];
    conn.on('lost', (reason: string) => lost.push(reason));
    const waiting = conn.call({ destination: 'org.example', path: '/a', member: 'NeverAnswered' }).catch((e: Error) => e.message);
    await new Promise((r) => setTimeout(r, 50));
    bus.hangUp();
    expect(await waiting).toMatch(/the connection to the bus ended \(the bus closed it\)/);
    await new Promise((r) => setTimeout(r, 50));
    expect(lost).toEqual(['the bus closed it']);
    await expect(conn.call({ destination: 'org.example', path: '/a', member: 'Echo' })).rejects.toThrow(/has ended/);
  }));

  it('says why it could not connect: no socket, or a refused authentication', async () => {
    await expect(BusConnection.connect('unix:path=/nonexistent/uyuni-cdk-test-bus')).rejects.toThrow(/ENOENT/);
    const bus = await fakeBus('reject');
    try {
      await expect(BusConnection.connect(bus.address)).rejects.toThrow(/refused the authentication: REJECTED EXTERNAL/);
    } finally {
      await bus.close();
    }
  });
});

describe('SystemdManager on a connection that ends', () => {
  it('fails a call in flight, and every later one, with the loss naming the bus, and settles `lost` once', async () => {
    const bus = await fakeBus();
    const mgr = await SystemdManager.connect({ session: true, address: bus.address });
    try {
      // The fake bus answers no systemd method: Reload waits until the hang-up.
      const reload = mgr.Reload().catch((e: unknown) => e);
      await new Promise((r) => setTimeout(r, 50));
      bus.hangUp();
      const failed = await reload;
      expect(failed).toBeInstanceOf(BusLostError);
      expect((failed as Error).message).toBe(`the connection to the session bus (${bus.address}) was lost (the bus closed it)`);
      expect(await mgr.lost).toBe(failed);
      await expect(mgr.StopUnit('web.service')).rejects.toBe(failed);
    } finally {
      mgr.close();
      await bus.close();
    }
  });
});
