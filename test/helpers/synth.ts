import { createHash } from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { parse, parseAllDocuments } from 'yaml';
import { parseConfig } from '../../src/config/load';
import { synthesize } from '../../src/synth';
import type { Plan } from '../../src/plan/types';
import type { K8sObject } from './validate';

export const ROOT = path.join(__dirname, '..', '..');

/** Every file below `dir` with a hash of its content, by relative path. */
export function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out[path.relative(dir, p)] = createHash('sha256').update(fs.readFileSync(p)).digest('hex');
    }
  };
  walk(dir);
  return out;
}

export function tempDir(prefix = 'uyuni-cdk-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export interface SynthesizedPlan {
  readonly dir: string;
  readonly plan: Plan;
  /** Objects per step file, in file order. */
  readonly files: Record<string, K8sObject[]>;
  /** Every object of the plan, in step order. */
  readonly objects: K8sObject[];
  /** The raw text of each step file. */
  readonly text: Record<string, string>;
  find(kind: string, name: string): K8sObject;
  /** A step of the plan index, by name (throws when there is none). */
  step(name: string): Plan['steps'][number];
}

/** The pod spec of a Job or Deployment. */
export const podSpec = (o: K8sObject) => o.spec.template.spec;
/** The plain-value environment of an object's first container, by name. */
export const envOf = (o: K8sObject): Record<string, string> =>
  Object.fromEntries(podSpec(o).containers[0].env.map((e: any) => [e.name, e.value]));

/** Reads a synthesized plan directory back. */
export function readPlanDir(dir: string): SynthesizedPlan {
  const plan = JSON.parse(fs.readFileSync(path.join(dir, 'uyuni.plan'), 'utf8')) as Plan;
  const files: Record<string, K8sObject[]> = {};
  const text: Record<string, string> = {};
  for (const f of fs.readdirSync(dir).filter((x) => x.endsWith('.k8s.yaml')).sort()) {
    text[f] = fs.readFileSync(path.join(dir, f), 'utf8');
    files[f] = parseAllDocuments(text[f]).map((d) => d.toJS()).filter(Boolean);
  }
  const objects = plan.steps.flatMap((s) => files[s.file] ?? []);
  return {
    dir, plan, files, objects, text,
    find(kind, name) {
      const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
      if (!found) throw new Error(`no ${kind} ${name} in plan ${plan.name}`);
      return found;
    },
    step(name) {
      const found = plan.steps.find((s) => s.name === name);
      if (!found) throw new Error(`no step ${name} in plan ${plan.name}`);
      return found;
    },
  };
}

/** Synthesizes a configuration (YAML text) into a temp dir and reads every plan back. */
export function synthYaml(yamlText: string): Record<string, SynthesizedPlan> & { root: string } {
  const root = tempDir();
  const dirs = synthesize(parseConfig(yamlText, 'test.yaml'), root);
  const out: any = { root };
  for (const d of dirs) if (fs.existsSync(path.join(root, d, 'uyuni.plan'))) out[d] = readPlanDir(path.join(root, d));
  return out;
}

/** The committed default configuration, with changes applied on top (deep merge). */
export function defaultConfigWith(changes: Record<string, unknown> = {}): string {
  const base = parse(fs.readFileSync(path.join(ROOT, 'uyuni.yaml'), 'utf8'));
  const merge = (a: any, b: any): any => {
    if (b === undefined) return a;
    if (b === null || typeof b !== 'object' || Array.isArray(b) || typeof a !== 'object' || a === null) return b;
    const out = { ...a };
    for (const [k, v] of Object.entries(b)) {
      if (v === undefined) delete out[k];
      else out[k] = merge(a[k], v);
    }
    return out;
  };
  return JSON.stringify(merge(base, changes));
}
