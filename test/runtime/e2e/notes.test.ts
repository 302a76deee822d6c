/**
 * The post-install notes at the end of a successful run, on the simulator: the notes synth wrote
 * into dist/install/uyuni.plan (test/notes.test.ts covers how they follow the configuration),
 * shown as text and as a `notes` event; none after a failed run.
 */
import { execFile } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { CREDENTIALS, credentialRequirement } from '../../../src/model/credentials';
import type { Plan } from '../../../src/plan/types';
import { startSimulator, Simulator } from '../../sim';
import { cli, ROOT, tmpDir } from './harness';
import { job, namespace, NS, writePlan } from '../plans';

let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});

const DIST_NOTES = (JSON.parse(fs.readFileSync(path.join(ROOT, 'dist/install/uyuni.plan'), 'utf8')) as Plan).notes!;

/** A small plan with the install's notes in its index. */
function planWithNotes(): string {
  const dir = writePlan([
    { name: 'namespace', objects: [namespace()] },
    { name: 'setup', objects: [job('uyuni-setup')], requires: [credentialRequirement(CREDENTIALS.admin, NS)] },
  ]);
  const index = path.join(dir, 'uyuni.plan');
  fs.writeFileSync(index, JSON.stringify({ ...JSON.parse(fs.readFileSync(index, 'utf8')), notes: DIST_NOTES }, null, 2));
  return dir;
}

describe('post-install notes after a run', () => {
  it('text: the URL, the command that prints the admin password, DNS and the ports, after the last step', async () => {
    sim = await startSimulator({});
    const dir = planWithNotes();
    const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath });
    expect(r.code).toBe(0);
    const notes = r.out.slice(r.out.indexOf('\nnotes:\n') + 1);
    expect(notes).toBe([
      'notes:',
      `  web UI: ${DIST_NOTES.url}`,
      '  administrator: user and password in Secret admin-credentials (keys username, password); the password:',
      `    kubectl --kubeconfig ${sim.kubeconfigPath} -n ${NS} get secret admin-credentials -o 'jsonpath={.data.password}' | base64 -d; echo`,
      '  DNS: uyuni.example.com → the address of the ingress controller (ingress class traefik)',
      '  ports that must reach it (clients, proxies):',
      '    80/TCP    web UI and clients\' repositories (HTTP): the ingress controller (ingress class traefik)',
      '    443/TCP   web UI and API (HTTPS): the ingress controller (ingress class traefik)',
      '    4505/TCP  salt publish: the ingress controller (Traefik entry point salt-publish, IngressRouteTCP)',
      '    4506/TCP  salt request: the ingress controller (Traefik entry point salt-request, IngressRouteTCP)',
      /Run complete in [^\n]*\n$/.exec(r.out)![0],
    ].join('\n'));
  });

  it('json: a notes event before run-done; its command (run with Debian\'s kubectl) prints the password the run generated', async () => {
    sim = await startSimulator({});
    const dir = planWithNotes();
    const r = await cli('run', dir, { kubeconfig: sim.kubeconfigPath, output: 'json' });
    expect(r.code).toBe(0);
    const events = r.out.trim().split('\n').map((l) => JSON.parse(l));
    const ev = events.find((e) => e.type === 'notes');
    expect(ev).toEqual({ at: expect.any(String), type: 'notes', notes: DIST_NOTES, adminPasswordCommand: expect.stringContaining('get secret admin-credentials') });
    expect(events.at(-1)).toMatchObject({ type: 'run-done', status: 'done' });
    expect(events.indexOf(ev)).toBe(events.length - 2);
    const secret = sim.get('v1', 'Secret', 'admin-credentials', NS);
    const password = Buffer.from(secret.data.password, 'base64').toString();
    expect(password).toMatch(/^\S{32}$/);
    // in a child process: the simulator answers from this one
    const k = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
      execFile('sh', ['-c', ev.adminPasswordCommand], { encoding: 'utf8', timeout: 30_000 }, (e, stdout, stderr) => (e ? reject(e) : resolve({ stdout, stderr })));
    });
    expect(k.stderr).toBe('');
    expect(k.stdout).toBe(`${password}\n`);
  });

  it('none after a failed run', async () => {
    sim = await startSimulator({ jobs: { 'uyuni-setup': { outcome: 'fail', exitCode: 2 } } });
    const runDir = tmpDir();
    const r = await cli('run', planWithNotes(), { kubeconfig: sim.kubeconfigPath, runDir });
    expect(r.code).toBe(1);
    expect(r.out).not.toContain('notes:');
    expect(fs.readFileSync(path.join(runDir, 'events.jsonl'), 'utf8')).not.toContain('"type":"notes"');
  });
});
