// The code's shape, guarded: ESLint (eslint.config.js) with typescript-eslint's recommended rules,
// import-x/no-cycle (cycles of values: it skips type-only imports, which
// test/architecture/cycles.test.ts counts) and the layer rules (constructs and model never import
// config, the runtime never the synth side, systemd never the agent, ...). Zero errors and zero warnings.
import { spawnSync } from 'child_process';
import * as path from 'path';
import { ROOT } from './helpers/synth';

describe('lint', () => {
  it('finds nothing: no import cycle, no layer crossed, no explicit any in src', () => {
    const r = spawnSync(process.execPath, [path.join(ROOT, 'node_modules', 'eslint', 'bin', 'eslint.js'), '--max-warnings', '0', '.'], {
      cwd: ROOT, encoding: 'utf8', timeout: 120_000,
    });
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
  }, 120_000);

  it('catches a layer crossing and an import cycle (the rules are live)', () => {
    const lint = (file: string, text: string) => spawnSync(process.execPath, [
      path.join(ROOT, 'node_modules', 'eslint', 'bin', 'eslint.js'), '--stdin', '--stdin-filename', file, '-f', 'json',
    ], { cwd: ROOT, encoding: 'utf8', input: text, timeout: 60_000 });
    const rules = (r: ReturnType<typeof lint>) => (JSON.parse(r.stdout)[0]?.messages ?? []).map((m: { ruleId: string }) => m.ruleId);
    expect(rules(lint('src/constructs/x.ts', "import type { UyuniConfig } from '../config/schema';\nexport type X = UyuniConfig;\n")))
      .toContain('no-restricted-imports');
    expect(rules(lint('src/runtime/x.ts', "import { installPlan } from '../plans/install';\nexport const x = installPlan;\n")))
      .toContain('no-restricted-imports');
    // model/ports.ts imports model/db.ts: db.ts importing ports back closes a cycle.
    expect(rules(lint('src/model/db.ts', "import { PROXY_SERVICES } from './ports';\nexport const PG_PORT = 5432;\nexport const x = PROXY_SERVICES;\n")))
      .toContain('import-x/no-cycle');
  }, 120_000);

  it('refuses a function in src/ over 80 lines, comments counted; lets one of 80 pass, and any length in test/', () => {
    const lint = (file: string, text: string) => {
      const r = spawnSync(process.execPath, [path.join(ROOT, 'node_modules', 'eslint', 'bin', 'eslint.js'), '--stdin', '--stdin-filename', file, '-f', 'json'], {
        cwd: ROOT, encoding: 'utf8', input: text, timeout: 60_000,
      });
      return (JSON.parse(r.stdout)[0]?.messages ?? []).map((m: { ruleId: string }) => m.ruleId);
    };
    // `lines` lines in all: the signature, the body (a comment and statements), the closing brace
    const fn = (lines: number) => ['export function f(): number {', '  // one', ...Array.from({ length: lines - 3 }, (_, i) => `  if (Date.now() === ${i}) return ${i};`), '}', ''].join('\n');
    expect(lint('src/model/x.ts', fn(81))).toEqual(['max-lines-per-function']);
    expect(lint('src/model/x.ts', fn(80))).toEqual([]);
    expect(lint('test/x.test.ts', fn(81))).toEqual([]);
  }, 120_000);

  it('refuses an import() of a builtin, a package or a computed name in shipped code (the bundles run as vm.Script, which cannot import())', () => {
    const lint = (file: string, text: string) => {
      const r = spawnSync(process.execPath, [path.join(ROOT, 'node_modules', 'eslint', 'bin', 'eslint.js'), '--stdin', '--stdin-filename', file, '-f', 'json'], {
        cwd: ROOT, encoding: 'utf8', input: text, timeout: 60_000,
      });
      return (JSON.parse(r.stdout)[0]?.messages ?? []).map((m: { ruleId: string; message: string }) => `${m.ruleId}: ${m.message}`);
    };
    const refused = expect.stringMatching(/^no-restricted-syntax: no import\(\) of a builtin, a package or a computed name in shipped code/);
    expect(lint('src/cli/x.ts', "export async function ask(): Promise<unknown> {\n  return (await import('readline')).createInterface;\n}\n")).toEqual([refused]);
    expect(lint('src/runtime/x.ts', "export const client = () => import('@kubernetes/client-node');\n")).toEqual([refused]);
    expect(lint('bin/x.js', "'use strict';\nconst name = 'fs';\nmodule.exports = () => import(name);\n")).toEqual([refused]);
    // a module of ours is bundled: esbuild turns its import() into a require()
    expect(lint('src/cli/x.ts', "export const runtime = () => import('../runtime/commands');\n")).toEqual([]);
  }, 120_000);
});
