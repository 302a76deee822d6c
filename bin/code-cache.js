'use strict';
// Runs a CommonJS bundle with V8's code cache, as v8-compile-cache does for a module: Node 20
// caches compiled code for nothing it loads itself, and compiling the CLI's 7 MB bundle took a
// third of a `status`. A start that finds no cache writes one as the process exits, when it holds
// every function that command ran (not only what V8 compiles eagerly), so one cache per kind of
// command (`variant`: the verb). V8 takes a cache only under the V8 version and flags it was made
// with (bin/uyuni-cdk.js sets its heap flags before anything is compiled), and we key it by the
// bundle's content too (V8 itself checks only the source's length): under
// $XDG_CACHE_HOME/uyuni-cdk/code (~/.cache without it). An unreadable, corrupt or refused cache
// file only costs a compile; one that cannot be written, the next start's compile.
const crypto = require('crypto');
const fs = require('fs');
const Module = require('module');
const os = require('os');
const path = require('path');
const vm = require('vm');

/** Where the compiled code of the bundles is kept (XDG Base Directory: a relative value is ignored). */
function codeCacheDir(env = process.env, home = os.homedir()) {
  const xdg = env.XDG_CACHE_HOME;
  return path.join(xdg && path.isAbsolute(xdg) ? xdg : path.join(home, '.cache'), 'uyuni-cdk', 'code');
}

/** The cache file of a bundle's bytes for one kind of command under this V8 (valid for one V8 build only). */
function cacheFileOf(file, bytes, dir = codeCacheDir(), variant = '') {
  const key = crypto.createHash('sha256').update(bytes).update(`\0${process.versions.v8}\0${process.arch}`).digest('hex');
  return path.join(dir, `${path.basename(file)}-${variant.replace(/[^\w-]/g, '_').slice(0, 32)}-${key.slice(0, 32)}.bin`);
}

function readCache(file) {
  try {
    return fs.readFileSync(file);
  } catch {
    return undefined; // first start, or unreadable
  }
}

/** Without its own: another command's cache of the same bundle (the run's, for the first status after it). */
function readSibling(file) {
  const suffix = path.basename(file).slice(path.basename(file).lastIndexOf('-'));
  const prefix = path.basename(file).slice(0, path.basename(file).indexOf('-') + 1);
  try {
    const other = fs.readdirSync(path.dirname(file)).find((f) => f.startsWith(prefix) && f.endsWith(suffix));
    return other === undefined ? undefined : readCache(path.join(path.dirname(file), other));
  } catch {
    return undefined; // no cache yet: compile
  }
}

function writeCache(file, data) {
  const dir = path.dirname(file);
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, data, { mode: 0o600 });
    fs.renameSync(tmp, file); // atomic: a concurrent start reads the old file or the whole new one
    // The same bundle and command's caches of earlier builds go (a few MB each).
    const prefix = path.basename(file).slice(0, path.basename(file).lastIndexOf('-') + 1);
    for (const f of fs.readdirSync(dir)) if (f.startsWith(prefix) && f.endsWith('.bin') && f !== path.basename(file)) fs.rmSync(path.join(dir, f), { force: true });
  } catch {
    // a read-only or full disk: every start compiles
  }
}

/**
 * The exports of the CommonJS bundle `file`, its code compiled with the cached data of `variant`
 * when that is valid. `dir`: where the cache lives. Returns `hit`: whether V8 took the cache.
 */
function runBundle(file, variant = '', dir = codeCacheDir()) {
  const bytes = fs.readFileSync(file);
  const source = bytes.toString('utf8');
  const cacheFile = cacheFileOf(file, bytes, dir, variant);
  const own = readCache(cacheFile);
  const cachedData = own ?? readSibling(cacheFile);
  const script = new vm.Script(Module.wrap(source), { filename: file, cachedData });
  const hit = own !== undefined && !script.cachedDataRejected;
  if (!hit) process.once('exit', () => writeCache(cacheFile, script.createCachedData()));
  const mod = new Module(file, module);
  mod.filename = file;
  mod.paths = Module._nodeModulePaths(path.dirname(file));
  script.runInThisContext().call(mod.exports, mod.exports, Module.createRequire(file), mod, file, path.dirname(file));
  mod.loaded = true;
  return { exports: mod.exports, hit };
}

module.exports = { codeCacheDir, cacheFileOf, runBundle };
