/**
 * Layered configuration, as helm's `-f` and `--set`: several files (`-c base.yaml -c prod.yaml`)
 * and `key.path=value` assignments, merged in order. Later layers win; mappings merge key by key
 * (deeply), anything else (lists, scalars) is replaced whole; a `null` removes what an earlier
 * layer set. Every value keeps the layer it came from, so that a problem names the file (and
 * line) or the `--set` that wrote the bad value.
 */

/** Where settings come from, in order (later wins). */
export type ConfigSource =
  /** A YAML file. */
  | { readonly file: string }
  /**
   * `key.path=value` assignments, several separated by commas (as helm's `--set`); `via` is
   * how the user gave them, for messages: `--set` (the default) or `UYUNI_SET`.
   */
  | { readonly set: string; readonly via?: string };

type Path = ReadonlyArray<string | number>;

/** `a.b[0].c`: a path as messages name it. */
export function fieldName(p: ReadonlyArray<PropertyKey>): string {
  return p.map((k, i) => (typeof k === 'number' ? `[${k}]` : `${i > 0 ? '.' : ''}${String(k)}`)).join('') || '(top level)';
}

/** One layer: its settings and how to point into it. */
export interface Layer {
  /** How messages name it: `prod.yaml`, `--set images.tag=2026.10`. */
  readonly label: string;
  /** A file's settings: merged into the layers before it. */
  readonly value?: Record<string, unknown>;
  /** A `--set`'s: the value put at the path (lists there are indexed, not replaced). */
  readonly assign?: { readonly path: Path; readonly value: unknown };
  /** Where in the layer the value at `path` is written ("line 3, column 8"), if known. */
  where(path: Path): string | undefined;
  /** The scalar at `path` as the user wrote it, if known (YAML reads `2026.10` as 2026.1). */
  written(path: Path): string | undefined;
  /** How the user writes `text` as a quoted string at `path` in this layer. */
  quoted(path: Path, text: string): string;
}

/** A `--set` the syntax of which is wrong: its message names it. */
export class SetSyntaxError extends Error {}

/** `a.b[0].c` → ['a', 'b', 0, 'c']; `\.` is a dot inside a key (annotation names). */
export function parseKeyPath(text: string): (string | number)[] {
  const out: (string | number)[] = [];
  const bad = (why: string) => new SetSyntaxError(`the key path ${text} ${why}`);
  let i = 0;
  const readKey = () => {
    let key = '';
    while (i < text.length && text[i] !== '.' && text[i] !== '[') {
      if (text[i] === '\\' && text[i + 1] === '.') {
        key += '.';
        i += 2;
      } else key += text[i++];
    }
    if (key === '') throw bad('has an empty key');
    out.push(key);
  };
  readKey();
  while (i < text.length) {
    if (text[i] === '.') {
      i++;
      readKey();
    } else if (text[i] === '[') {
      const close = text.indexOf(']', i);
      const index = close < 0 ? '' : text.slice(i + 1, close);
      if (!/^[0-9]+$/.test(index)) throw bad('has an index that is not a whole number in [ ]');
      out.push(Number(index));
      i = close + 1;
    } else throw bad('needs a "." after ]');
  }
  return out;
}

/**
 * `a=1,b=[x,y],c="p,q"` → the assignments: commas outside quotes and brackets separate them,
 * `\,` is a comma in a value (as helm's `--set`).
 */
export function splitAssignments(text: string): string[] {
  const out: string[] = [];
  let cur = '';
  let depth = 0;
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\' && text[i + 1] === ',') {
      cur += ',';
      i++;
      continue;
    }
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '[' || c === '{') depth++;
    else if ((c === ']' || c === '}') && depth > 0) depth--;
    else if (c === ',' && depth === 0) {
      out.push(cur);
      cur = '';
      continue;
    }
    cur += c;
  }
  out.push(cur);
  return out;
}

/**
 * The layers of one `set` source: one per assignment, each value read by `read` (YAML, see
 * src/config/yaml-text.ts). Throws SetSyntaxError naming a bad one.
 */
export function setLayers(read: (text: string) => unknown, source: { set: string; via?: string }): Layer[] {
  const via = source.via ?? '--set';
  return splitAssignments(source.set).map((assignment) => {
    const label = `${via} ${assignment}`;
    const eq = assignment.indexOf('=');
    if (eq < 0) {
      throw new SetSyntaxError(`${label}: must be key.path=value (a comma separates assignments; write \\, for a comma in a value)`);
    }
    const keyText = assignment.slice(0, eq);
    const text = assignment.slice(eq + 1);
    let path: (string | number)[];
    try {
      path = parseKeyPath(keyText);
    } catch (e) {
      throw new SetSyntaxError(`${label}: ${(e as Error).message}`);
    }
    const value = read(text);
    const same = (p: Path) => p.length === path.length && p.every((k, i) => k === path[i]);
    return {
      label,
      assign: { path, value },
      where: () => undefined,
      written: (p) => (same(p) ? text : undefined),
      quoted: (_p, t) => `${via} '${keyText}="${t}"'`,
    };
  });
}

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const pathKey = (p: Path) => JSON.stringify(p);

/** The layers merged in order, and the layer each value came from. */
export interface Merged {
  readonly value: Record<string, unknown>;
  /** What could not be merged (a `--set` of a list item past the end), each naming its layer. */
  readonly problems: readonly string[];
  /** The layer that wrote the value at `path` (or the nearest enclosing one); undefined where none did. */
  originOf(path: Path): Layer | undefined;
}

export function mergeLayers(layers: readonly Layer[]): Merged {
  const problems: string[] = [];
  const origins = new Map<string, Layer>();
  const forget = (p: Path) => {
    const prefix = pathKey(p).slice(0, -1);
    for (const k of [...origins.keys()]) if (k === pathKey(p) || k.startsWith(`${prefix},`)) origins.delete(k);
  };
  /** Records `layer` for `value` at `p` and everything below it. */
  const mark = (value: unknown, p: Path, layer: Layer) => {
    origins.set(pathKey(p), layer);
    if (Array.isArray(value)) value.forEach((v, i) => mark(v, [...p, i], layer));
    else if (isMap(value)) for (const [k, v] of Object.entries(value)) mark(v, [...p, k], layer);
  };
  const into = (target: Record<string, unknown>, incoming: Record<string, unknown>, p: Path, layer: Layer) => {
    for (const [key, v] of Object.entries(incoming)) {
      const here = [...p, key];
      const old = target[key];
      if (v === null && old !== undefined) {
        forget(here);
        delete target[key];
      } else if (isMap(old) && isMap(v)) {
        // a mapping two layers write stays the first one's (its keys are each their own layer's)
        into(old, v, here, layer);
      } else {
        forget(here);
        target[key] = v;
        mark(v, here, layer);
      }
    }
  };
  /** A `--set`: down its path (making mappings, or lists for an index, where there is none), then merged there. */
  const assign = (root: Record<string, unknown>, path: Path, v: unknown, layer: Layer) => {
    const pastEnd = (i: number) => {
      const list = path.slice(0, i);
      const n = (node as unknown as unknown[]).length;
      problems.push(`${layer.label}: ${fieldName(path.slice(0, i + 1))} is past the end of the list (${fieldName(list)} has ${n} item${n === 1 ? '' : 's'}; [${n}] adds one)`);
    };
    let node: Record<string | number, unknown> = root;
    for (let i = 0; i < path.length - 1; i++) {
      const k = path[i];
      if (Array.isArray(node) && (k as number) > node.length) return pastEnd(i);
      const wantList = typeof path[i + 1] === 'number';
      const next = node[k];
      if (wantList ? Array.isArray(next) : isMap(next)) node = next as Record<string | number, unknown>;
      else {
        forget(path.slice(0, i + 1));
        node[k] = wantList ? [] : {};
        origins.set(pathKey(path.slice(0, i + 1)), layer);
        node = node[k] as Record<string | number, unknown>;
      }
    }
    const last = path[path.length - 1];
    if (Array.isArray(node)) {
      if ((last as number) > node.length) return pastEnd(path.length - 1);
      forget(path);
      node[last as number] = v;
      mark(v, path, layer);
    } else into(node as Record<string, unknown>, { [last]: v }, path.slice(0, -1), layer);
  };
  const value: Record<string, unknown> = {};
  for (const layer of layers) {
    if (layer.value) into(value, structuredClone(layer.value), [], layer);
    if (layer.assign) assign(value, layer.assign.path, structuredClone(layer.assign.value), layer);
  }
  return {
    value,
    problems,
    originOf: (p) => {
      for (let n = p.length; n > 0; n--) {
        const o = origins.get(pathKey(p.slice(0, n)));
        if (o) return o;
      }
      return undefined;
    },
  };
}
