/**
 * `npm run --silent cluster -- up|down|status|env DIR` (scripts/cluster.js): the real control plane
 * for a person or a test run. `kubelet DIR` is the fake kubelet's own process, started by `up`,
 * which also writes what cert-manager would (./certificates.ts).
 */
import * as path from 'path';
import { KubeConfig } from '@kubernetes/client-node';
import { FakeCertManager } from './certificates';
import { FakeKubelet } from './kubelet';
import { down, health, NODE_NAME, readState, up } from './plane';

const USAGE = `Usage: npm run --silent cluster -- <command> DIR

A real Kubernetes control plane on 127.0.0.1 (etcd, kube-apiserver, kube-controller-manager,
kube-scheduler of the version .ci/control-plane pins, built once from the Go module proxy and
cached, or taken from $KUBEBUILDER_ASSETS) with a fake kubelet: one Node whose pods "run".

Commands:
  up DIR       start everything, wait until it is ready; DIR/kubeconfig is the admin's
  status DIR   which components run; exit 1 and their logs' tails when one died
  env DIR      print KUBECONFIG=... for eval
  down DIR     stop every process 'up' started (by PID) and remove DIR

Examples:
  npm run --silent cluster -- up /tmp/plane && export KUBECONFIG=/tmp/plane/kubeconfig
  node bin/uyuni-cdk.js run dist/install --yes
  npm run --silent cluster -- down /tmp/plane
`;

export async function main(argv: string[]): Promise<number> {
  const [command, dir] = argv;
  if (!command || command === '--help' || command === '-h' || !dir) {
    process.stdout.write(USAGE);
    return command && command !== '--help' && command !== '-h' ? 2 : 0;
  }
  switch (command) {
    case 'up': {
      const state = await up(dir);
      process.stdout.write(`${state.kubeconfig}\n`);
      return 0;
    }
    case 'down': {
      const stopped = await down(dir);
      process.stderr.write(`cluster: stopped ${stopped.join(', ') || 'nothing (nothing was running)'}; removed ${path.resolve(dir)}\n`);
      return 0;
    }
    case 'status': {
      const state = readState(dir);
      const dead = health(dir);
      process.stdout.write(`${state.version} at ${state.server}, kubeconfig ${state.kubeconfig}\n`);
      for (const [c, pid] of Object.entries(state.pids)) process.stdout.write(`  ${c.padEnd(24)} pid ${pid}\n`);
      if (dead.length) process.stdout.write(`${dead.join('\n')}\n`);
      return dead.length ? 1 : 0;
    }
    case 'env':
      process.stdout.write(`export KUBECONFIG=${readState(dir).kubeconfig}\n`);
      return 0;
    case 'kubelet': {
      const state = readState(dir);
      const pki = path.join(path.resolve(dir), 'pki');
      const kubelet = new FakeKubelet({
        dir: path.resolve(dir), kubeconfig: path.join(pki, 'kubelet.kubeconfig'), nodeName: NODE_NAME, port: state.ports.kubelet,
        tlsCert: path.join(pki, 'kubelet.crt'), tlsKey: path.join(pki, 'kubelet.key'), volumeRoot: path.join(path.resolve(dir), 'volumes'),
      });
      await kubelet.start();
      const kc = new KubeConfig();
      kc.loadFromFile(path.join(pki, 'kubelet.kubeconfig'));
      const certs = new FakeCertManager(kc, { cert: path.join(pki, 'ca.crt'), key: path.join(pki, 'ca.key') }, (l) => process.stderr.write(`${new Date().toISOString()} cert-manager: ${l}\n`));
      await certs.start();
      const stop = () => { void Promise.all([kubelet.stop(), certs.stop()]).then(() => process.exit(0)); };
      process.on('SIGTERM', stop);
      process.on('SIGINT', stop);
      return new Promise(() => undefined);
    }
    default:
      process.stderr.write(`unknown command ${command}\n${USAGE}`);
      return 2;
  }
}
