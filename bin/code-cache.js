'use strict';
// Runs a CommonJS bundle with V8's code cache, as v8-compile-cache does for a module: Node 20
// caches compiled code for nothing it loads itself, and compiling the CLI's 7 MB bundle took a
// third of a `status`. A start that finds no cache writes one as the process exits, when it holds
// every function that command ran (not only what V8 compiles eagerly), so one cache per kind of
// command (`variant`: the verb). V8 takes a cache only under the V8 version and flags it was made
// with, and we key it by the bundle's content and path too (V8 itself checks only the source's
// length): under
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

const hex = (...parts) => crypto.createHash('sha256').update(parts.join('\0')).digest('hex');

/**
 * The cache file of a bundle's bytes at its path for one kind of command under this V8 (valid for
 * one V8 build only): `<bundle>-<variant>-<path>-<build>.bin`. The path is part of the name
 * because V8 keeps the file name a cache was made under in the stack traces of the code it holds:
 * two checkouts of one build share no cache, so each one's traces name its own files.
 */
function cacheFileOf(file, bytes, dir = codeCacheDir(), variant = '') {
  const where = hex(path.resolve(file)).slice(0, 16);
  const build = crypto.createHash('sha256').update(bytes).update(`\0${process.versions.v8}\0${process.arch}`).digest('hex').slice(0, 32);
  return path.join(dir, `${path.basename(file)}-${variant.replace(/[^\w-]/g, '_').slice(0, 32)}-${where}-${build}.bin`);
}

/** The file name's last two parts, `-<path>-<build>.bin`: the same bundle file and build. */
const sameBundle = (name) => name.slice(name.lastIndexOf('-', name.lastIndexOf('-') - 1));
/** All but its last part: the same bundle file and command. */
const sameCommand = (name) => name.slice(0, name.lastIndexOf('-') + 1);

function readCache(file) {
  try {
    return fs.readFileSync(file);
  } catch {
    return undefined; // first start, or unreadable
  }
}

/** Without its own: another command's cache of the same bundle (the run's, for the first status after it). */
function readSibling(file) {
  const name = path.basename(file);
  const prefix = name.slice(0, name.indexOf('.cjs-') + 5);
  try {
    const other = fs.readdirSync(path.dirname(file)).find((f) => f.startsWith(prefix) && f.endsWith(sameBundle(name)));
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
    // The caches of earlier builds of the same bundle file and command go (a few MB each).
    const prefix = sameCommand(path.basename(file));
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
