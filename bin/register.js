'use strict';
// Runs the TypeScript sources directly: each .ts file is transpiled with swc on require
// (no type-checking here; `npm test` runs `tsc --noEmit`). Faster than ts-node, and no build
// step, so a fresh `npm ci` is enough. Transpiled files are cached by path, size and mtime
// under node_modules/.cache (the generated cert-manager types alone are 0.9 MB of TypeScript).
const crypto = require('crypto');
const fs = require('fs');
const Module = require('module');
const path = require('path');

const cacheDir = path.join(__dirname, '..', 'node_modules', '.cache', 'uyuni-cdk-swc');
const options = {
  jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
  module: { type: 'commonjs' },
  // No source maps: Node reads them only with --enable-source-maps, and every start would parse
  // them for nothing. (Cache key below includes this, so a change re-transpiles.)
  sourceMaps: false,
};
let swc;

function transpile(filename) {
  const stat = fs.statSync(filename);
  const key = crypto.createHash('sha1').update(`${filename}\0${stat.size}\0${stat.mtimeMs}\0${JSON.stringify(options)}`).digest('hex');
  const cached = path.join(cacheDir, `${key}.js`);
  try {
    return fs.readFileSync(cached, 'utf8');
  } catch {
    // not cached yet
  }
  swc = swc || require('@swc/core');
  const { code } = swc.transformSync(fs.readFileSync(filename, 'utf8'), { ...options, filename });
  try {
    fs.mkdirSync(cacheDir, { recursive: true });
    const tmp = `${cached}.${process.pid}`;
    fs.writeFileSync(tmp, code);
    fs.renameSync(tmp, cached);
  } catch {
    // a read-only tree still works, just slower
  }
  return code;
}

Module._extensions['.ts'] = function compileTs(module, filename) {
  module._compile(transpile(filename), filename);
};
