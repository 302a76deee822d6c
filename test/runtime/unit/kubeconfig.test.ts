import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { loadKubeConfig } from '../../../src/kube/load-kubeconfig';
import { BadInput } from '../../../src/kube/api-errors';

function kubeconfig(dir: string, file: string, cluster: string, server: string, current?: string): string {
  const p = path.join(dir, file);
  fs.writeFileSync(p, `apiVersion: v1
kind: Config
clusters:
- name: ${cluster}
  cluster: {server: ${server}, insecure-skip-tls-verify: true}
users:
- name: ${cluster}-user
  user: {token: t}
contexts:
- name: ${cluster}
  context: {cluster: ${cluster}, user: ${cluster}-user}
${current ? `current-context: ${current}` : ''}
`);
  return p;
}

describe('kubeconfig loading, like kubectl', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kc-'));
  const a = kubeconfig(dir, 'a', 'alpha', 'http://127.0.0.1:1001', 'alpha');
  const b = kubeconfig(dir, 'b', 'beta', 'http://127.0.0.1:1002', 'beta');

  it('merges a colon-separated $KUBECONFIG; the first current-context wins', () => {
    const kc = loadKubeConfig({}, { KUBECONFIG: `${a}:${path.join(dir, 'missing')}:${b}` }, dir);
    expect(kc.getCurrentCluster()?.server).toBe('http://127.0.0.1:1001');
    expect(kc.contexts.map((c) => c.name)).toEqual(['alpha', 'beta']);
  });

  it('switches with --context, and refuses an unknown one as bad input', () => {
    expect(loadKubeConfig({ context: 'beta' }, { KUBECONFIG: `${a}:${b}` }, dir).getCurrentCluster()?.server).toBe('http://127.0.0.1:1002');
    expect(() => loadKubeConfig({ context: 'gamma' }, { KUBECONFIG: `${a}:${b}` }, dir)).toThrow(BadInput);
  });

  it('prefers --kubeconfig over $KUBECONFIG, and falls back to ~/.kube/config', () => {
    expect(loadKubeConfig({ kubeconfig: b }, { KUBECONFIG: a }, dir).getCurrentCluster()?.server).toBe('http://127.0.0.1:1002');
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'home-'));
    expect(() => loadKubeConfig({}, {}, home)).toThrow(/no kubeconfig/);
    fs.mkdirSync(path.join(home, '.kube'));
    fs.copyFileSync(b, path.join(home, '.kube', 'config'));
    expect(loadKubeConfig({}, {}, home).getCurrentCluster()?.server).toBe('http://127.0.0.1:1002');
  });

  it('calls a missing --kubeconfig bad input', () => {
    expect(() => loadKubeConfig({ kubeconfig: path.join(dir, 'nope') }, {}, dir)).toThrow(BadInput);
  });
});
