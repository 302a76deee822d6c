/**
 * The plan index (uyuni.plan) as a superstruct schema: the shape of src/plan/types.ts, checked field by field.
 * Objects are `type()`s, so fields a reader does not know are ignored (docs/plan-format.md,
 * "Compatibility"). Each check carries the words a user reads after the field's path
 * (src/plan/reader.ts puts them together).
 */
import { array, boolean, define, dynamic, literal, optional, record, refine, Struct, type } from 'superstruct';
import type { Action, Gate, GeneratedValue, Operand } from './types';
import { PLAN_FORMAT_VERSION } from './types';
import { isWaitCondition, WaitCondition } from './waits';

export const REQUIRED = 'is required';

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const text = define<string>('string', (v) => (v === undefined ? REQUIRED : typeof v === 'string' || 'must be a string'));
const positive = define<number>('positive', (v) => (typeof v === 'number' && Number.isFinite(v) && v > 0) || 'must be a positive number');
const count = define<number>('count', (v) => (v === undefined ? REQUIRED : (Number.isInteger(v) && (v as number) >= 0) || 'must be a whole number, 0 or more'));

/** One of fixed strings; the message lists them. */
function oneOf<const T extends readonly string[]>(values: T): Struct<T[number], null> {
  const message = `must be one of ${values.map((v) => JSON.stringify(v)).join(', ')}`;
  return define<T[number]>('enum', (v) => (v === undefined ? REQUIRED : (values as readonly unknown[]).includes(v) || `${message}, not ${JSON.stringify(v)}`));
}

/** A struct of one member of a union `U` as a struct of `U` (superstruct's Struct is invariant). */
const member = <U>() => <T extends U>(s: Struct<T, unknown>): Struct<U, unknown> => s as unknown as Struct<U, unknown>;

/** One struct per `type` of a tagged union. */
type Variants<T extends { readonly type: string }> = { readonly [K in T['type']]: Struct<T & { readonly type: K }, unknown> };

/** An object whose `type` picks its shape; an unknown `type` is reported on that field. */
function tagged<T extends { readonly type: string }>(variants: Variants<T>): Struct<T, null> {
  const tags = Object.keys(variants) as Array<T['type']>;
  const unknownType = member<T>()(type({ type: oneOf(tags) }) as unknown as Struct<T, unknown>);
  const known = (v: unknown): v is { type: T['type'] } => isRecord(v) && tags.includes(v.type as T['type']);
  return dynamic<T>((v) => (known(v) ? member<T>()(variants[v.type]) : unknownType));
}

const ref = type({ apiVersion: text, kind: text, name: text, namespace: optional(text) });

/** Inside a wait every problem is told as "needs an object and a for of ..." (src/plan/reader.ts). */
const waitFor = define<WaitCondition>('wait', (v) => (v === undefined ? REQUIRED : isWaitCondition(v) || `is ${JSON.stringify(v)}`));
const wait = type({ object: ref, for: waitFor });

const literalValue = member<GeneratedValue>()(type({ literal: text }));
const randomValue = member<GeneratedValue>()(type({ random: type({ length: refine(count, 'length', (n) => n > 0 || 'must be at least 1') }) }));
const generatedValue = dynamic<GeneratedValue>((v) => (isRecord(v) && 'literal' in v ? literalValue : randomValue));

const requirement = type({
  kind: oneOf(['Secret', 'ConfigMap'] as const),
  name: text,
  namespace: text,
  keys: array(text),
  ifMissing: oneOf(['fail', 'generate'] as const),
  generate: optional(record(text, generatedValue)),
  secretType: optional(text),
  message: optional(text),
  madeBy: optional(text),
});

const action = tagged<Action>({
  scale: type({ type: literal('scale'), object: ref, replicas: count }),
  delete: type({ type: literal('delete'), object: ref }),
});

const operand = define<Operand>('operand', (v) => (v === undefined ? REQUIRED
  : (isRecord(v) && (typeof v.fact === 'string' || typeof v.value === 'string')) || 'must be {"fact": <name>} or {"value": <text>}'));

const gate = tagged<Gate>({
  'compare-versions': type({
    type: literal('compare-versions'), left: operand, op: oneOf(['<', '<=', '==', '!=', '>=', '>'] as const), right: operand, message: text,
  }),
  equals: type({ type: literal('equals'), left: operand, right: operand, message: text }),
  'not-equals': type({ type: literal('not-equals'), left: operand, right: operand, message: text }),
  present: type({ type: literal('present'), fact: text, message: text }),
});

const step = type({
  name: text,
  file: text,
  description: text,
  objects: array(ref),
  waits: array(wait),
  timeoutSeconds: positive,
  requires: array(requirement),
  actions: array(action),
  gates: array(gate),
  factsFrom: optional(ref),
  fileSummary: optional(type({ sha256: text, jobSpecHashes: record(text, text) })),
  oneShot: optional(oneOf(['migration', 'upgrade'] as const)),
  destroysData: optional(text),
  imagesFromFacts: optional(array(type({ image: text, fact: text }))),
});

export const planSchema = type({
  formatVersion: literal(PLAN_FORMAT_VERSION),
  name: text,
  description: text,
  generator: text,
  namespace: text,
  selector: record(text, text),
  deadlineSeconds: positive,
  steps: refine(array(step), 'non-empty', (v) => v.length > 0 || 'must be a non-empty list'),
  flow: optional(type({ kind: oneOf(['migration', 'upgrade'] as const), source: optional(text) })),
  identity: optional(type({ fqdn: text, product: text, imageGeneration: text, tlsMode: text, caSecret: optional(text) })),
  caRotation: optional(type({
    phase: oneOf(['addca', 'rotate'] as const),
    caSecret: text,
    emergency: optional(boolean()),
    force: optional(boolean()),
    trustedBy: optional(array(type({ kind: oneOf(['ConfigMap', 'Secret'] as const), name: text, namespace: text, key: text, what: text }))),
  })),
  notes: optional(type({
    url: text,
    admin: optional(type({ secret: text, usernameKey: text, passwordKey: text })),
    adminFrom: optional(text),
    dns: array(type({ name: text, pointTo: text })),
    ports: array(type({ port: positive, protocol: oneOf(['TCP', 'UDP'] as const), what: text, via: text })),
  })),
});
