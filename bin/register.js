'use strict';
// Runs the TypeScript sources directly: each .ts file is transpiled with swc on require
// (no type-checking here; `npm test` runs `tsc --noEmit`). Much faster than ts-node, and
// no build step, so a fresh `npm ci` is enough.
const fs = require('fs');
const Module = require('module');
const { transformSync } = require('@swc/core');

const options = {
  jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
  module: { type: 'commonjs' },
  sourceMaps: 'inline',
};

Module._extensions['.ts'] = function compileTs(module, filename) {
  const source = fs.readFileSync(filename, 'utf8');
  const { code } = transformSync(source, { ...options, filename });
  module._compile(code, filename);
};
