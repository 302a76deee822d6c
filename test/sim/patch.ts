// The three patch kinds (JSON merge, JSON patch, server-side apply). Strategic merge is served
// as JSON merge: lists are replaced whole, which is what the runtime's patches need.
//
// Server-side apply keeps, per field manager, the set of leaf fields it applied (lists are
// atomic leaves), stored in metadata.managedFields as FieldsV1. A manager that changes a field
// another Apply manager owns with a different value gets a 409 conflict unless force=true;
// fields a manager stops applying are removed unless someone else owns them.
import { clone, deepEqual } from './store';

export class PatchError extends Error {
  constructor(readonly code: number, message: string, readonly conflicts?: Array<{ manager: string; field: string }>) {
    super(message);
  }
}

const isMap = (v: any): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function mergePatch(target: any, patch: any): any {
  if (!isMap(patch)) return clone(patch);
  const out = isMap(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

function pointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw new PatchError(422, `invalid JSON pointer "${path}"`);
  return path.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

export function jsonPatch(doc: any, ops: any): any {
  if (!Array.isArray(ops)) throw new PatchError(400, 'json patch must be an array of operations');
  let root = clone(doc);
  const parentOf = (path: string[]) => {
    let p = root;
    for (const seg of path.slice(0, -1)) {
      p = p?.[Array.isArray(p) ? Number(seg) : seg];
      if (p === undefined || p === null) throw new PatchError(422, `jsonpatch: doc is missing path: "/${path.join('/')}"`);
    }
    return p;
  };
  const get = (path: string[]) => {
    let p = root;
    for (const seg of path) {
      if (p === undefined || p === null || !(seg in Object(p))) throw new PatchError(422, `jsonpatch: doc is missing path: "/${path.join('/')}"`);
      p = p[Array.isArray(p) ? Number(seg) : seg];
    }
    return p;
  };
  const remove = (path: string[]) => {
    const parent = parentOf(path);
    const last = path[path.length - 1];
    get(path);
    if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else delete parent[last];
  };
  const add = (path: string[], value: any) => {
    if (path.length === 0) {
      root = clone(value);
      return;
    }
    const parent = parentOf(path);
    const last = path[path.length - 1];
    if (Array.isArray(parent)) parent.splice(last === '-' ? parent.length : Number(last), 0, clone(value));
    else parent[last] = clone(value);
  };
  for (const op of ops) {
    const path = pointer(op.path ?? '');
    switch (op.op) {
      case 'add':
        add(path, op.value);
        break;
      case 'remove':
        remove(path);
        break;
      case 'replace':
        get(path);
        remove(path);
        add(path, op.value);
        break;
      case 'move': {
        const v = get(pointer(op.from));
        remove(pointer(op.from));
        add(path, v);
        break;
      }
      case 'copy':
        add(path, get(pointer(op.from)));
        break;
      case 'test':
        if (!deepEqual(get(path), op.value)) throw new PatchError(422, `testing value /${path.join('/')} failed`);
        break;
      default:
        throw new PatchError(422, `unexpected kind of JSON patch operation: "${op.op}"`);
    }
  }
  return root;
}

// --- server-side apply ---

type Path = string[];
const IGNORED_METADATA = new Set(['name', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'deletionTimestamp', 'managedFields', 'selfLink']);

/** Leaf field paths of an applied configuration (maps recurse, anything else is a leaf). */
export function leafPaths(obj: any): Path[] {
  const out: Path[] = [];
  const walk = (v: any, p: Path) => {
    if (isMap(v) && Object.keys(v).length > 0) {
      for (const [k, c] of Object.entries(v)) {
        if (p.length === 0 && (k === 'apiVersion' || k === 'kind' || k === 'status')) continue;
        if (p.length === 1 && p[0] === 'metadata' && IGNORED_METADATA.has(k)) continue;
        walk(c, [...p, k]);
      }
    } else if (p.length > 0) out.push(p);
  };
  walk(obj, []);
  return out;
}

const key = (p: Path) => JSON.stringify(p);

function getAt(o: any, p: Path): any {
  let v = o;
  for (const s of p) v = isMap(v) ? v[s] : undefined;
  return v;
}

function setAt(o: any, p: Path, value: any): void {
  let v = o;
  for (const s of p.slice(0, -1)) {
    if (!isMap(v[s])) v[s] = {};
    v = v[s];
  }
  v[p[p.length - 1]] = value;
}

function deleteAt(o: any, p: Path): void {
  const chain: any[] = [o];
  for (const s of p.slice(0, -1)) {
    const next = chain[chain.length - 1]?.[s];
    if (!isMap(next)) return;
    chain.push(next);
  }
  delete chain[chain.length - 1][p[p.length - 1]];
  // drop maps the removal left empty, as apply does
  for (let i = chain.length - 1; i > 0; i--) {
    if (Object.keys(chain[i]).length === 0) delete chain[i - 1][p[i - 1]];
    else break;
  }
}

/** FieldsV1 (`{"f:spec":{"f:replicas":{}}}`) <-> leaf paths. */
export function encodeFields(paths: Path[]): any {
  const root: any = {};
  for (const p of paths) {
    let n = root;
    for (const s of p) n = n[`f:${s}`] ??= {};
  }
  return root;
}

export function decodeFields(f: any): Path[] {
  const out: Path[] = [];
  const walk = (n: any, p: Path) => {
    const children = Object.keys(n ?? {}).filter((k) => k.startsWith('f:'));
    if (children.length === 0) {
      if (p.length) out.push(p);
      return;
    }
    for (const c of children) walk(n[c], [...p, c.slice(2)]);
  };
  walk(f, []);
  return out;
}

const overlaps = (a: Path, b: Path) => {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
};

/**
 * Applies `applied` as `manager` onto `existing` (undefined when creating). Returns the merged
 * object with managedFields updated; throws PatchError(409) listing conflicts when not forced.
 */
export function serverSideApply(existing: any | undefined, applied: any, manager: string, force: boolean, apiVersion: string, time: string): any {
  const entries: any[] = clone(existing?.metadata?.managedFields ?? []);
  const owned = new Map<string, Path[]>();
  for (const e of entries) if (e.operation === 'Apply') owned.set(e.manager, decodeFields(e.fieldsV1));
  const mine = leafPaths(applied);

  const conflicts: Array<{ manager: string; field: string }> = [];
  for (const [other, paths] of owned) {
    if (other === manager) continue;
    const kept: Path[] = [];
    for (const theirs of paths) {
      const clash = mine.find((p) => overlaps(p, theirs) && !deepEqual(getAt(existing, theirs), getAt(applied, theirs)));
      if (clash && !force) conflicts.push({ manager: other, field: '.' + theirs.join('.') });
      if (!clash) kept.push(theirs);
    }
    owned.set(other, kept);
  }
  if (conflicts.length) {
    const list = conflicts.map((c) => `conflict with "${c.manager}": ${c.field}`).join('\n');
    throw new PatchError(409, `Apply failed with ${conflicts.length} conflict${conflicts.length > 1 ? 's' : ''}: ${list}`, conflicts);
  }

  const result = clone(existing ?? {});
  const mineKeys = new Set(mine.map(key));
  const othersKeys = new Set([...owned].filter(([m]) => m !== manager).flatMap(([, ps]) => ps.map(key)));
  for (const p of owned.get(manager) ?? []) {
    if (!mineKeys.has(key(p)) && !othersKeys.has(key(p))) deleteAt(result, p);
  }
  for (const p of mine) setAt(result, p, clone(getAt(applied, p)));
  owned.set(manager, mine);

  result.metadata ??= {};
  const others = entries.filter((e) => !(e.operation === 'Apply' && e.manager === manager) && !(e.operation === 'Apply' && !(owned.get(e.manager)?.length)));
  for (const e of others) if (e.operation === 'Apply') e.fieldsV1 = encodeFields(owned.get(e.manager)!);
  result.metadata.managedFields = [
    ...others,
    { manager, operation: 'Apply', apiVersion, time, fieldsType: 'FieldsV1', fieldsV1: encodeFields(mine) },
  ];
  return result;
}
