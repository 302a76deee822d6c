/**
 * The D-Bus wire format (the D-Bus specification, "Message Protocol"): what the agent's bus
 * connection (dbus-connection.ts) writes and reads. Values follow their signature:
 * - `y n q i u d h` numbers, `x t` bigint, `b` boolean, `s o g` string;
 * - `a…` an array, `a{…}` an object keyed by the entry's key (its keys are strings or numbers),
 *   `a y` a Buffer;
 * - `(…)` an array of the struct's fields;
 * - `v` a `{ signature, value }` (read only: nothing the agent sends carries a variant).
 *
 * Written for the agent's few dozen call shapes and thousands of answers per cleanup: signatures
 * are parsed once and kept, and a message is written into one buffer.
 */

export const MessageType = { METHOD_CALL: 1, METHOD_RETURN: 2, ERROR: 3, SIGNAL: 4 } as const;

/** Header flag: the sender expects no reply. */
export const NO_REPLY_EXPECTED = 0x1;

export interface Variant {
  readonly signature: string;
  readonly value: unknown;
}

export interface Message {
  readonly type: number;
  readonly flags: number;
  readonly serial: number;
  readonly path?: string;
  readonly interface?: string;
  readonly member?: string;
  readonly errorName?: string;
  readonly replySerial?: number;
  readonly destination?: string;
  readonly sender?: string;
  readonly signature: string;
  readonly body: unknown[];
}

/** What a method call carries; the serial is the connection's. */
export interface Call {
  readonly destination?: string;
  readonly path: string;
  readonly interface?: string;
  readonly member: string;
  readonly signature?: string;
  readonly body?: readonly unknown[];
  readonly flags?: number;
}

export class WireError extends Error {}

/** One complete type of a signature. */
interface Type {
  readonly code: string;
  /** Element of an array; key and value of a dict entry; fields of a struct. */
  readonly children: readonly Type[];
}

const BASIC = 'ybnqiuxtdsogh';
const ALIGN: Record<string, number> = { y: 1, b: 4, n: 2, q: 2, i: 4, u: 4, x: 8, t: 8, d: 8, h: 4, s: 4, o: 4, g: 1, a: 4, '(': 8, '{': 8, v: 1 };
const MAX_DEPTH = 64;
const OBJECT_PATH = /^\/$|^(\/[A-Za-z0-9_]+)+$/;

const parsed = new Map<string, readonly Type[]>();

/** The complete types of a signature, parsed once per distinct signature. */
export function parseSignature(signature: string): readonly Type[] {
  let types = parsed.get(signature);
  if (types) return types;
  let at = 0;
  const one = (depth: number): Type => {
    if (depth > MAX_DEPTH) throw new WireError(`signature ${JSON.stringify(signature)} nests too deeply`);
    const code = signature[at++];
    if (code === undefined) throw new WireError(`signature ${JSON.stringify(signature)} ends inside a type`);
    if (BASIC.includes(code) || code === 'v') return { code, children: [] };
    if (code === 'a') return { code, children: [one(depth + 1)] };
    if (code === '(' || code === '{') {
      const close = code === '(' ? ')' : '}';
      const children: Type[] = [];
      while (signature[at] !== close) {
        if (at >= signature.length) throw new WireError(`signature ${JSON.stringify(signature)} does not close its ${code}`);
        children.push(one(depth + 1));
      }
      at++;
      if (children.length === 0 || (code === '{' && (children.length !== 2 || !BASIC.includes(children[0].code)))) {
        throw new WireError(`signature ${JSON.stringify(signature)} has a malformed ${code === '(' ? 'struct' : 'dict entry'}`);
      }
      return { code, children };
    }
    throw new WireError(`signature ${JSON.stringify(signature)} has an unknown type code ${JSON.stringify(code)}`);
  };
  const list: Type[] = [];
  while (at < signature.length) list.push(one(0));
  types = list;
  if (parsed.size < 1024) parsed.set(signature, types);
  return types;
}

/** A growing little-endian buffer, aligned from its start (a message's first byte). */
class Writer {
  private buf = Buffer.allocUnsafe(512);
  length = 0;

  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.length + n));
    this.buf.copy(bigger, 0, 0, this.length);
    this.buf = bigger;
  }

  align(n: number): void {
    const pad = (n - (this.length % n)) % n;
    this.room(pad);
    this.buf.fill(0, this.length, this.length + pad);
    this.length += pad;
  }

  byte(v: number): void {
    this.room(1);
    this.buf[this.length++] = v;
  }

  u32(v: number): void {
    this.align(4);
    this.room(4);
    this.buf.writeUInt32LE(v, this.length);
    this.length += 4;
  }

  /** Writes a placeholder u32 and returns where it is, for a length known later. */
  reserve(): number {
    this.u32(0);
    return this.length - 4;
  }

  patch(at: number, v: number): void {
    this.buf.writeUInt32LE(v, at);
  }

  put(code: string, v: unknown): void {
    switch (code) {
      case 'y': this.byte(num(v, 0, 0xff)); return;
      case 'b': this.u32(v ? 1 : 0); return;
      case 'n': this.align(2); this.room(2); this.buf.writeInt16LE(num(v, -0x8000, 0x7fff), this.length); this.length += 2; return;
      case 'q': this.align(2); this.room(2); this.buf.writeUInt16LE(num(v, 0, 0xffff), this.length); this.length += 2; return;
      case 'i': this.align(4); this.room(4); this.buf.writeInt32LE(num(v, -0x80000000, 0x7fffffff), this.length); this.length += 4; return;
      case 'u': case 'h': this.u32(num(v, 0, 0xffffffff)); return;
      case 'x': this.align(8); this.room(8); this.buf.writeBigInt64LE(BigInt(v as number | bigint), this.length); this.length += 8; return;
      case 't': this.align(8); this.room(8); this.buf.writeBigUInt64LE(BigInt(v as number | bigint), this.length); this.length += 8; return;
      case 'd': this.align(8); this.room(8); this.buf.writeDoubleLE(Number(v), this.length); this.length += 8; return;
      case 'o':
        if (typeof v !== 'string' || !OBJECT_PATH.test(v)) throw new WireError(`${JSON.stringify(v)} is not an object path`);
        this.text(v, true);
        return;
      case 's': this.text(str(v), true); return;
      case 'g': parseSignature(str(v)); this.text(str(v), false); return;
      default: throw new WireError(`cannot write a ${code} as a basic value`);
    }
  }

  private text(v: string, long: boolean): void {
    if (v.includes('\0')) throw new WireError('a D-Bus string cannot contain NUL');
    const n = Buffer.byteLength(v);
    if (long) this.u32(n);
    else this.byte(n);
    this.room(n + 1);
    this.buf.write(v, this.length, 'utf8');
    this.length += n;
    this.buf[this.length++] = 0;
  }

  value(t: Type, v: unknown): void {
    if (t.code === 'a') {
      const at = this.reserve();
      const el = t.children[0];
      this.align(ALIGN[el.code]);
      const start = this.length;
      if (el.code === 'y' && Buffer.isBuffer(v)) {
        this.room(v.length);
        v.copy(this.buf, this.length);
        this.length += v.length;
      } else if (el.code === '{') {
        const kc = el.children[0].code;
        // A Map's keys are values already; an object's are strings, turned back into the key type.
        const key = v instanceof Map ? (k: unknown) => k : (k: string) => ('xt'.includes(kc) ? BigInt(k) : 'ynqiuhd'.includes(kc) ? Number(k) : kc === 'b' ? k === 'true' : k);
        for (const [k, x] of v instanceof Map ? v : Object.entries(v as Record<string, unknown>)) {
          this.align(8);
          this.value(el.children[0], key(k as string));
          this.value(el.children[1], x);
        }
      } else {
        if (!Array.isArray(v)) throw new WireError(`expected an array for ${JSON.stringify(v)}`);
        for (const x of v) this.value(el, x);
      }
      this.patch(at, this.length - start);
      return;
    }
    if (t.code === '(') {
      if (!Array.isArray(v) || v.length !== t.children.length) throw new WireError(`expected a struct of ${t.children.length} fields`);
      this.align(8);
      t.children.forEach((c, i) => this.value(c, v[i]));
      return;
    }
    if (t.code === 'v') throw new WireError('writing variants is not supported');
    this.put(t.code, v);
  }

  bytes(): Buffer {
    return this.buf.subarray(0, this.length);
  }
}

function num(v: unknown, min: number, max: number): number {
  const n = typeof v === 'bigint' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) throw new WireError(`${String(v)} is not an integer from ${min} to ${max}`);
  return n;
}

function str(v: unknown): string {
  if (typeof v !== 'string') throw new WireError(`${JSON.stringify(v)} is not a string`);
  return v;
}

const FIELD = { path: 1, interface: 2, member: 3, errorName: 4, replySerial: 5, destination: 6, sender: 7, signature: 8 } as const;
/** A header field's name by its code. */
const FIELD_NAME = Object.fromEntries(Object.entries(FIELD).map(([name, code]) => [code, name])) as Record<number, keyof typeof FIELD | undefined>;
const FIELD_TYPE: Record<number, string> = { 1: 'o', 2: 's', 3: 's', 4: 's', 5: 'u', 6: 's', 7: 's', 8: 'g' };

/** A method call as bytes (little-endian), with `serial`. */
export function encodeCall(serial: number, call: Call): Buffer {
  const signature = call.signature ?? '';
  const types = parseSignature(signature);
  const body = call.body ?? [];
  if (body.length !== types.length) throw new WireError(`${call.member}: the signature ${JSON.stringify(signature)} needs ${types.length} values, got ${body.length}`);
  const w = new Writer();
  w.byte(0x6c); // 'l'
  w.byte(MessageType.METHOD_CALL);
  w.byte(call.flags ?? 0);
  w.byte(1);
  const bodyLength = w.reserve();
  w.u32(serial);
  const fieldsAt = w.reserve();
  const fieldsStart = w.length;
  const field = (code: number, v: string | undefined): void => {
    if (v === undefined) return;
    w.align(8);
    w.byte(code);
    w.put('g', FIELD_TYPE[code]);
    w.put(FIELD_TYPE[code], v);
  };
  field(FIELD.path, call.path);
  field(FIELD.interface, call.interface);
  field(FIELD.member, call.member);
  field(FIELD.destination, call.destination);
  if (signature) field(FIELD.signature, signature);
  w.patch(fieldsAt, w.length - fieldsStart);
  w.align(8);
  const bodyStart = w.length;
  types.forEach((t, i) => w.value(t, body[i]));
  w.patch(bodyLength, w.length - bodyStart);
  return w.bytes();
}

/** Reads values from one message's bytes; offsets count from the message's first byte. */
class Reader {
  at = 0;
  constructor(private readonly buf: Buffer, private readonly le: boolean, private readonly end: number) {}

  private need(n: number): void {
    if (this.at + n > this.end) throw new WireError('a message ends inside a value');
  }

  align(n: number): void {
    this.at += (n - (this.at % n)) % n;
    if (this.at > this.end) throw new WireError('a message ends inside its padding');
  }

  u32(): number {
    this.align(4);
    this.need(4);
    const v = this.le ? this.buf.readUInt32LE(this.at) : this.buf.readUInt32BE(this.at);
    this.at += 4;
    return v;
  }

  private text(length: number): string {
    this.need(length + 1);
    const s = this.buf.toString('utf8', this.at, this.at + length);
    this.at += length + 1;
    return s;
  }

  value(t: Type, depth = 0): unknown {
    const b = this.buf;
    switch (t.code) {
      case 'y': this.need(1); return b[this.at++];
      case 'b': return this.u32() !== 0;
      case 'n': { this.align(2); this.need(2); const v = this.le ? b.readInt16LE(this.at) : b.readInt16BE(this.at); this.at += 2; return v; }
      case 'q': { this.align(2); this.need(2); const v = this.le ? b.readUInt16LE(this.at) : b.readUInt16BE(this.at); this.at += 2; return v; }
      case 'i': { this.align(4); this.need(4); const v = this.le ? b.readInt32LE(this.at) : b.readInt32BE(this.at); this.at += 4; return v; }
      case 'u': case 'h': return this.u32();
      case 'x': { this.align(8); this.need(8); const v = this.le ? b.readBigInt64LE(this.at) : b.readBigInt64BE(this.at); this.at += 8; return v; }
      case 't': { this.align(8); this.need(8); const v = this.le ? b.readBigUInt64LE(this.at) : b.readBigUInt64BE(this.at); this.at += 8; return v; }
      case 'd': { this.align(8); this.need(8); const v = this.le ? b.readDoubleLE(this.at) : b.readDoubleBE(this.at); this.at += 8; return v; }
      case 's': case 'o': return this.text(this.u32());
      case 'g': { this.need(1); return this.text(b[this.at++]); }
      case 'v': {
        if (depth > MAX_DEPTH) throw new WireError('variants nest too deeply');
        this.need(1);
        const signature = this.text(b[this.at++]);
        const types = parseSignature(signature);
        if (types.length !== 1) throw new WireError(`a variant's signature ${JSON.stringify(signature)} is not one complete type`);
        return { signature, value: this.value(types[0], depth + 1) };
      }
      case '(': {
        this.align(8);
        return t.children.map((c) => this.value(c, depth + 1));
      }
      case 'a': {
        const length = this.u32();
        const el = t.children[0];
        this.align(ALIGN[el.code]);
        const stop = this.at + length;
        if (stop > this.end) throw new WireError('an array runs past the end of its message');
        if (el.code === 'y') {
          const bytes = Buffer.from(b.subarray(this.at, stop));
          this.at = stop;
          return bytes;
        }
        if (el.code === '{') {
          const out: Record<string, unknown> = {};
          while (this.at < stop) {
            this.align(8);
            const k = this.value(el.children[0], depth + 1);
            out[String(k)] = this.value(el.children[1], depth + 1);
          }
          return out;
        }
        const out: unknown[] = [];
        while (this.at < stop) out.push(this.value(el, depth + 1));
        return out;
      }
      default: throw new WireError(`cannot read type ${t.code}`);
    }
  }
}

const HEADER_FIELDS = parseSignature('a(yv)')[0];

/** The length of the message starting at `buf[0]`, once its fixed header (16 bytes) is there. */
export function messageLength(buf: Buffer): number | undefined {
  if (buf.length < 16) return undefined;
  const le = buf[0] === 0x6c;
  if (!le && buf[0] !== 0x42) throw new WireError(`a message starts with the unknown endianness byte ${buf[0]}`);
  const body = le ? buf.readUInt32LE(4) : buf.readUInt32BE(4);
  const fields = le ? buf.readUInt32LE(12) : buf.readUInt32BE(12);
  const headerEnd = 16 + fields;
  return headerEnd + ((8 - (headerEnd % 8)) % 8) + body;
}

/** One complete message (its bytes as `messageLength` measured them). */
export function decodeMessage(buf: Buffer): Message {
  const le = buf[0] === 0x6c;
  if (buf[3] !== 1) throw new WireError(`a message of protocol version ${buf[3]}`);
  const r = new Reader(buf, le, buf.length);
  r.at = 4;
  const bodyLength = r.u32();
  const serial = r.u32();
  const fields = r.value(HEADER_FIELDS) as Array<[number, Variant]>;
  const header: Record<string, unknown> = {};
  for (const [code, v] of fields) {
    const name = FIELD_NAME[code];
    if (name) header[name] = v.value;
  }
  r.align(8);
  if (r.at + bodyLength !== buf.length) throw new WireError('a message\'s body length does not match its size');
  const signature = (header.signature as string | undefined) ?? '';
  const body = parseSignature(signature).map((t) => r.value(t));
  if (r.at !== buf.length) throw new WireError('a message\'s body is longer than its signature says');
  return { type: buf[1], flags: buf[2], serial, signature, body, ...header } as Message;
}
