/**
 * The simulator's exec (test/sim/exec.ts) through the real client-node Exec: output on its
 * channels, the Status of a non-zero exit, and refusals of a missing pod and a stopped container.
 */
import { Exec, KubeConfig } from '@kubernetes/client-node';
import { PassThrough } from 'stream';
import { startSimulator, Simulator } from '.';

let sim: Simulator;
afterEach(async () => {
  await sim?.stop();
});

async function exec(pod: string, command: string[]): Promise<{ out: string; err: string; status: any }> {
  const kc = new KubeConfig();
  kc.loadFromFile(sim.kubeconfigPath);
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c) => { out += c; });
  stderr.on('data', (c) => { err += c; });
  const status = await new Promise((resolve, reject) => {
    new Exec(kc).exec('default', pod, 'main', command, stdout, stderr, null, false, resolve).catch(reject);
  });
  return { out, err, status };
}

function runningPod(name: string, running = true): any {
  return {
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
    spec: { containers: [{ name: 'main', image: 'x' }], nodeName: 'elsewhere' },
    status: { phase: running ? 'Running' : 'Succeeded', containerStatuses: [{ name: 'main', ready: running, restartCount: 0, image: 'x', imageID: '', state: running ? { running: { startedAt: new Date().toISOString() } } : { terminated: { exitCode: 0 } } }] },
  };
}

describe('the simulator\'s exec', () => {
  it('streams what the script prints and ends with its Status', async () => {
    sim = await startSimulator({ externalNodes: ['elsewhere'], exec: (c) => (c.command[0] === 'true' ? { stdout: 'hello\n', stderr: 'note\n' } : { stderr: 'boom\n', exitCode: 3 }) });
    sim.put(runningPod('p'));
    expect(await exec('p', ['true'])).toEqual({ out: 'hello\n', err: 'note\n', status: { metadata: {}, status: 'Success' } });
    const failed = await exec('p', ['false', '-x']);
    expect(failed.status).toMatchObject({ status: 'Failure', reason: 'NonZeroExitCode', details: { causes: [{ reason: 'ExitCode', message: '3' }] } });
    expect(sim.execs.map((e) => e.command)).toEqual([['true'], ['false', '-x']]);
  });

  it('refuses a pod that does not exist and a container that does not run, before upgrading', async () => {
    sim = await startSimulator({ externalNodes: ['elsewhere'], exec: () => ({ stdout: 'never' }) });
    sim.put(runningPod('done', false));
    await expect(exec('missing', ['true'])).rejects.toMatchObject({ message: expect.stringMatching(/404/) });
    await expect(exec('done', ['true'])).rejects.toMatchObject({ message: expect.stringMatching(/400/) });
    expect(sim.execs).toEqual([]);
  });
});
