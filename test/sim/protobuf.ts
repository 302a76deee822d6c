// Just enough of Kubernetes' protobuf encoding to read what `kubectl create
// secret|configmap|namespace` sends: the `k8s\0` + runtime.Unknown envelope and the fields of
// ObjectMeta, ConfigMap, Secret and Namespace (field numbers from k8s.io/api generated.proto).
// Any other kind is refused with 415 by the caller.

type Fields = Map<number, Array<Buffer | number>>;

function readFields(buf: Buffer): Fields {
  const out: Fields = new Map();
  let i = 0;
  const varint = (): number => {
    let v = 0;
    let mul = 1;
    for (;;) {
      const b = buf[i++];
      v += (b & 0x7f) * mul;
      if (b < 0x80) return v;
      mul *= 128;
    }
  };
  while (i < buf.length) {
    const key = varint();
    const field = Math.floor(key / 8);
    const wire = key & 7;
    let value: Buffer | number;
    if (wire === 0) value = varint();
    else if (wire === 2) {
      const len = varint();
      value = buf.subarray(i, i + len);
      i += len;
    } else if (wire === 1) {
      value = buf.subarray(i, i + 8);
      i += 8;
    } else if (wire === 5) {
      value = buf.subarray(i, i + 4);
      i += 4;
    } else throw new Error(`unsupported protobuf wire type ${wire}`);
    out.set(field, [...(out.get(field) ?? []), value]);
  }
  return out;
}

const str = (f: Fields, n: number) => (f.get(n)?.[0] as Buffer | undefined)?.toString('utf8');
const strs = (f: Fields, n: number) => (f.get(n) ?? []).map((b) => (b as Buffer).toString('utf8'));
const msg = (f: Fields, n: number) => {
  const b = f.get(n)?.[0];
  return b === undefined ? undefined : readFields(b as Buffer);
};
function map(f: Fields, n: number, value: (b: Buffer) => string): Record<string, string> | undefined {
  const entries = f.get(n);
  if (!entries) return undefined;
  const out: Record<string, string> = {};
  for (const e of entries) {
    const kv = readFields(e as Buffer);
    out[str(kv, 1) ?? ''] = value((kv.get(2)?.[0] as Buffer) ?? Buffer.alloc(0));
  }
  return out;
}
const utf8 = (b: Buffer) => b.toString('utf8');
const base64 = (b: Buffer) => b.toString('base64');

function objectMeta(f: Fields | undefined): any {
  if (!f) return {};
  const md: any = { name: str(f, 1), generateName: str(f, 2), namespace: str(f, 3), labels: map(f, 11, utf8), annotations: map(f, 12, utf8) };
  const finalizers = strs(f, 14);
  if (finalizers.length) md.finalizers = finalizers;
  for (const k of Object.keys(md)) if (md[k] === undefined || md[k] === '') delete md[k];
  return md;
}

/** Decodes a protobuf request body into the JSON object it stands for. Throws for unknown kinds. */
export function decodeProtobuf(body: Buffer): any {
  if (body.subarray(0, 4).toString('latin1') !== 'k8s\0') throw new Error('missing the k8s protobuf envelope');
  const unknown = readFields(body.subarray(4));
  const typeMeta = msg(unknown, 1);
  const apiVersion = typeMeta && str(typeMeta, 1);
  const kind = typeMeta && str(typeMeta, 2);
  const raw = readFields((unknown.get(2)?.[0] as Buffer) ?? Buffer.alloc(0));
  const metadata = objectMeta(msg(raw, 1));
  const immutable = (n: number) => (raw.get(n)?.[0] === 1 ? true : undefined);
  if (apiVersion === 'v1' && kind === 'ConfigMap') return { apiVersion, kind, metadata, data: map(raw, 2, utf8), binaryData: map(raw, 3, base64), immutable: immutable(4) };
  if (apiVersion === 'v1' && kind === 'Secret') return { apiVersion, kind, metadata, data: map(raw, 2, base64), type: str(raw, 3), stringData: map(raw, 4, utf8), immutable: immutable(5) };
  if (apiVersion === 'v1' && kind === 'Namespace') {
    const spec = msg(raw, 2);
    return { apiVersion, kind, metadata, spec: spec ? { finalizers: strs(spec, 1) } : undefined };
  }
  throw new Error(`protobuf is not supported for ${apiVersion}/${kind}`);
}
