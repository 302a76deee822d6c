// The import graph of a source tree, read with the TypeScript parser and resolved as tsc does,
// type-only imports counted (eslint's import-x rules skip them): shared by the cycle test
// (cycles.test.ts) and the rooms test (rooms.test.ts) of test/architecture.
import * as fs from 'fs';
import * as path from 'path';
import * as ts from 'typescript';

export interface Arrow {
  readonly to: string;
  /** `file.ts:12` of every import of `to` in the file. */
  readonly lines: string[];
  /** Every import of `to` is type-only. */
  typeOnly: boolean;
}

/** The files of a directory's `.ts` tree (declaration files left out), by absolute path. */
export function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...sourceFiles(p));
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out.sort();
}

/**
 * What a file imports, each with whether it is type-only: import and export-from declarations
 * (`import type`, `import { type X }` with every name a type, `export type ... from`),
 * `import x = require()`, `import('...')` and `require('...')` calls, and `import('...')` types.
 */
export function importsOf(file: string): Array<{ spec: string; line: number; typeOnly: boolean }> {
  const sf = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const out: Array<{ spec: string; line: number; typeOnly: boolean }> = [];
  const add = (spec: ts.Node | undefined, typeOnly: boolean) => {
    if (spec && ts.isStringLiteralLike(spec)) out.push({ spec: spec.text, line: sf.getLineAndCharacterOfPosition(spec.getStart()).line + 1, typeOnly });
  };
  const visit = (n: ts.Node): void => {
    if (ts.isImportDeclaration(n)) {
      const c = n.importClause;
      const named = c?.namedBindings && ts.isNamedImports(c.namedBindings) ? c.namedBindings.elements : undefined;
      const typeOnly = Boolean(c && (c.isTypeOnly || (!c.name && named && named.length > 0 && named.every((e) => e.isTypeOnly))));
      add(n.moduleSpecifier, typeOnly);
    } else if (ts.isExportDeclaration(n)) {
      const named = n.exportClause && ts.isNamedExports(n.exportClause) ? n.exportClause.elements : undefined;
      add(n.moduleSpecifier, n.isTypeOnly || Boolean(named && named.length > 0 && named.every((e) => e.isTypeOnly)));
    } else if (ts.isImportEqualsDeclaration(n) && ts.isExternalModuleReference(n.moduleReference)) {
      add(n.moduleReference.expression, n.isTypeOnly);
    } else if (ts.isCallExpression(n) && (n.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(n.expression) && n.expression.text === 'require'))) {
      add(n.arguments[0], false);
    } else if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument)) {
      add(n.argument.literal, true);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

const OPTIONS: ts.CompilerOptions = { moduleResolution: ts.ModuleResolutionKind.Node10, resolveJsonModule: true };

/**
 * The import graph of the `.ts` files under `dir`: an arrow per imported file of the tree. A
 * relative import that resolves to no file at all is listed in `unresolved` (`file.ts:3 ./x`).
 */
export function importGraph(dir: string, unresolved: string[] = []): Map<string, Map<string, Arrow>> {
  const files = sourceFiles(dir);
  const inTree = new Set(files);
  const graph = new Map<string, Map<string, Arrow>>();
  for (const file of files) {
    const arrows = new Map<string, Arrow>();
    for (const i of importsOf(file)) {
      const to = ts.resolveModuleName(i.spec, file, OPTIONS, ts.sys).resolvedModule?.resolvedFileName;
      if (!to && i.spec.startsWith('.')) unresolved.push(`${path.relative(dir, file)}:${i.line} ${i.spec}`);
      if (!to || !inTree.has(path.resolve(to))) continue;
      const key = path.resolve(to);
      const a = arrows.get(key) ?? { to: key, lines: [], typeOnly: true };
      a.lines.push(`${path.basename(file)}:${i.line}`);
      a.typeOnly &&= i.typeOnly;
      arrows.set(key, a);
    }
    graph.set(file, arrows);
  }
  return graph;
}
