/**
 * StepLogs.drain is bounded, and the bound keeps the process alive: a stream that never ends and
 * holds no socket (what a run met on kube-apiserver after a Job's SuccessCriteriaMet) must not let
 * the event loop empty, or the run stops with "internal error ... no pending request or timer".
 * Jest's own handles keep its process alive, so this runs in a child process of its own.
 */
import { spawnSync } from 'child_process';
import * as path from 'path';

const ROOT = path.join(__dirname, '..', '..', '..');

const SCRIPT = `
const fs = require('fs'), os = require('os'), path = require('path');
const { StepLogs } = require(${JSON.stringify(path.join(ROOT, 'src/runtime/apply/step-logs.ts'))});
// A cluster whose log request never answers and holds nothing open.
const cluster = { followLog: () => new Promise(() => {}) };
const logs = new StepLogs(cluster, fs.mkdtempSync(path.join(os.tmpdir(), 'drain-')), 'step', { emit() {} });
logs.observe([{ metadata: { namespace: 'ns', name: 'pod' }, status: { containerStatuses: [{ name: 'c', state: { running: {} } }] }, spec: { containers: [{ name: 'c' }] } }]);
logs.drain(100).then(() => { logs.stop(); process.stdout.write('drained'); });
`;

test('drain returns after its bound even when no stream ends and nothing else is pending', () => {
  const r = spawnSync(process.execPath, ['-r', path.join(ROOT, 'bin', 'register.js'), '-e', SCRIPT], { encoding: 'utf8', timeout: 20_000 });
  expect({ status: r.status, out: r.stdout, err: r.stderr }).toEqual({ status: 0, out: 'drained', err: '' });
});
