/**
 * The control plane's PKI, made with Debian's openssl: an EC P-256 CA, the API server's serving
 * certificate, the fake kubelet's, client certificates (CN = user, O = groups, as kube-apiserver's
 * x509 authenticator reads them) and the ServiceAccount signing key pair; kubeconfigs that embed
 * them. Everything stays in `<dir>/pki`.
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

const openssl = (args: string[], cwd: string) => execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });

export interface Pki {
  dir: string;
  ca: string;
  caKey: string;
  apiserver: { cert: string; key: string };
  kubelet: { cert: string; key: string };
  admin: { cert: string; key: string };
  /** The components' own users (all in system:masters), so the audit log tells their writes from the admin's. */
  components: Record<'kube-controller-manager' | 'kube-scheduler' | 'kubelet', { cert: string; key: string }>;
  saKey: string;
  saPub: string;
}

export function makePki(root: string): Pki {
  const dir = path.join(root, 'pki');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const p = (f: string) => path.join(dir, f);
  openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '3650', '-subj', '/CN=uyuni-cdk-test-ca'], dir);
  const serverSans = 'IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local';
  issue(dir, 'apiserver', '/CN=kube-apiserver', 'serverAuth', serverSans);
  issue(dir, 'kubelet', '/CN=fake-kubelet', 'serverAuth', 'IP:127.0.0.1,DNS:localhost');
  issue(dir, 'admin', '/O=system:masters/CN=kubernetes-admin', 'clientAuth');
  const components = {
    'kube-controller-manager': issue(dir, 'kcm-client', '/O=system:masters/CN=uyuni-cdk-test:kube-controller-manager', 'clientAuth'),
    'kube-scheduler': issue(dir, 'scheduler-client', '/O=system:masters/CN=uyuni-cdk-test:kube-scheduler', 'clientAuth'),
    kubelet: issue(dir, 'kubelet-client', '/O=system:masters/CN=uyuni-cdk-test:fake-kubelet', 'clientAuth'),
  };
  openssl(['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', 'sa.key'], dir);
  openssl(['pkey', '-in', 'sa.key', '-pubout', '-out', 'sa.pub'], dir);
  return {
    dir, ca: p('ca.crt'), caKey: p('ca.key'),
    apiserver: { cert: p('apiserver.crt'), key: p('apiserver.key') },
    kubelet: { cert: p('kubelet.crt'), key: p('kubelet.key') },
    admin: { cert: p('admin.crt'), key: p('admin.key') },
    components,
    saKey: p('sa.key'), saPub: p('sa.pub'),
  };
}

/** A certificate signed by the CA: `<name>.crt` and `<name>.key` in the PKI folder. */
export function issue(dir: string, name: string, subject: string, usage: 'serverAuth' | 'clientAuth', sans?: string): { cert: string; key: string } {
  const ext = [
    'basicConstraints=critical,CA:FALSE',
    'keyUsage=critical,digitalSignature,keyEncipherment',
    `extendedKeyUsage=${usage}`,
    ...(sans ? [`subjectAltName=${sans}`] : []),
  ].join('\n');
  fs.writeFileSync(path.join(dir, `${name}.ext`), `${ext}\n`);
  openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject], dir);
  openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '365', '-extfile', `${name}.ext`, '-out', `${name}.crt`], dir);
  return { cert: path.join(dir, `${name}.crt`), key: path.join(dir, `${name}.key`) };
}

const b64 = (file: string) => fs.readFileSync(file).toString('base64');

/** A kubeconfig (YAML is JSON) with the CA and a client certificate embedded, as `kubectl config --embed-certs` writes. */
export function kubeconfig(file: string, server: string, ca: string, user: string, client: { cert: string; key: string }): string {
  const config = {
    apiVersion: 'v1', kind: 'Config', 'current-context': 'uyuni-cdk-test',
    clusters: [{ name: 'uyuni-cdk-test', cluster: { server, 'certificate-authority-data': b64(ca) } }],
    users: [{ name: user, user: { 'client-certificate-data': b64(client.cert), 'client-key-data': b64(client.key) } }],
    contexts: [{ name: 'uyuni-cdk-test', context: { cluster: 'uyuni-cdk-test', user } }],
  };
  fs.writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  return file;
}
