/**
 * The record of what a backup is taken with (src/scripts/lib/backup-record.sh), written by Job
 * uyuni-backup-record's script against kube-apiserver (v1.34.4) with the Role dist/backup
 * synthesizes and a token of its ServiceAccount: the pods of the server as the API reports them
 * in pod status (the test plane's fake kubelet reports `imageID: fake://<image>`, which a real
 * containerd reports as `<repo>@sha256:<digest>`), the runtime's identity ConfigMap, and nothing
 * the Role does not allow. The simulator reports `imageID: ''` (test/sim/controllers.ts), so this
 * is the only place a kubelet's imageID reaches the record through a real API server.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as YAML from 'yaml';
import { BackupRecord } from '../../src/model/backup-record';
import { parseFacts } from '../../src/runtime/core/facts';
import { runScript } from '../helpers/script-run';
import { plane, until } from './helpers';

const p = plane();
const ROOT = path.join(__dirname, '..', '..');
const SERVER = 'registry.opensuse.org/uyuni/server:2026.08';

/** The synthesized objects of dist/backup's record step (ServiceAccount, Role, RoleBinding) moved into `ns`. */
function recordAccount(ns: string): string {
  const docs = YAML.parseAllDocuments(fs.readFileSync(path.join(ROOT, 'dist', 'backup', '0004-record.k8s.yaml'), 'utf8')).map((d) => d.toJS());
  const account = docs.filter((d) => ['ServiceAccount', 'Role', 'RoleBinding'].includes(d.kind));
  expect(account.map((d) => d.kind)).toEqual(['ServiceAccount', 'Role', 'RoleBinding']);
  return account.map((d) => {
    d.metadata.namespace = ns;
    for (const s of d.subjects ?? []) s.namespace = ns;
    return YAML.stringify(d);
  }).join('---\n');
}

describe('uyuni-backup-record against kube-apiserver', () => {
  const ns = p.namespace('record');
  const temps: string[] = [];
  const temp = (prefix: string) => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    temps.push(d);
    return d;
  };
  afterAll(async () => {
    await p.kubectl(['delete', 'namespace', ns, '--wait=false']);
    for (const d of temps) fs.rmSync(d, { recursive: true, force: true });
  });

  it('records each pod\'s image and imageID as the API reports them, and the identity, with the synthesized Role', async () => {
    expect((await p.kubectl(['create', 'namespace', ns])).code).toBe(0);
    const applied = await p.kubectl(['apply', '-f', '-'], recordAccount(ns));
    expect(applied.err).toBe('');
    const identity = JSON.stringify({ fqdn: 'uyuni.example.com', product: 'registry.opensuse.org/uyuni/server', imageGeneration: '2026.08', tlsMode: 'generated', plan: 'install', run: 'r-1', at: '2026-12-01T20:00:00Z' });
    const objects = [
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'uyuni-cdk-history', namespace: ns }, data: { identity } },
      {
        apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'uyuni', namespace: ns },
        spec: {
          replicas: 1, selector: { matchLabels: { 'app.kubernetes.io/part-of': 'uyuni', 'app.kubernetes.io/component': 'server' } },
          template: {
            metadata: { labels: { 'app.kubernetes.io/part-of': 'uyuni', 'app.kubernetes.io/component': 'server' } },
            spec: { containers: [{ name: 'uyuni', image: SERVER }] },
          },
        },
      },
    ];
    expect((await p.kubectl(['apply', '-f', '-'], objects.map((o) => YAML.stringify(o)).join('---\n'))).err).toBe('');
    const pod = await until('the server pod running with an imageID', async () => {
      const r = await p.kubectl(['-n', ns, 'get', 'pods', '-l', 'app.kubernetes.io/component=server', '-o', 'json']);
      const item = JSON.parse(r.out).items?.[0];
      return item?.status?.containerStatuses?.[0]?.imageID ? item : undefined;
    });
    const reported: string = pod.status.containerStatuses[0].imageID;
    expect(reported).toBe(`fake://${SERVER}`);

    // The pod's view: a token of the ServiceAccount, the plane's CA.
    const sa = temp('uyuni-cdk-sa-');
    const token = await p.kubectl(['-n', ns, 'create', 'token', 'uyuni-backup-record']);
    expect(token.code).toBe(0);
    fs.writeFileSync(path.join(sa, 'token'), token.out.trim());
    const kubeconfig = YAML.parse(fs.readFileSync(p.kubeconfig, 'utf8'));
    const cluster = kubeconfig.clusters[0].cluster;
    fs.writeFileSync(path.join(sa, 'ca.crt'), cluster['certificate-authority-data'] ? Buffer.from(cluster['certificate-authority-data'], 'base64') : fs.readFileSync(cluster['certificate-authority']));
    const backups = temp('uyuni-cdk-backups-');
    const env = {
      NAMESPACE: ns, POD_SELECTOR: 'app.kubernetes.io/part-of=uyuni,app.kubernetes.io/component in (server,db,hub-xmlrpc,coco,tftp)',
      CONFIGURATION: JSON.stringify({ fqdn: 'uyuni.example.com' }), BACKUP_DIR: backups, API_URL: cluster.server, SA_DIR: sa,
    };
    const r = await runScript('backup-record.sh', env);
    expect(r.code).toBe(0);
    expect(parseFacts(r.out).record_pods).toBe('1');
    const record = JSON.parse(fs.readFileSync(path.join(backups, '.record.json'), 'utf8')) as BackupRecord;
    expect(record.pods).toEqual([{ pod: pod.metadata.name, component: 'server', phase: 'Running', containers: [{ name: 'uyuni', image: SERVER, imageID: reported }] }]);
    expect(record.planIdentity).toEqual(JSON.parse(identity));
    expect(record.namespace).toBe(ns);

    // The Role allows the one ConfigMap: under another name the history is not readable (403), and the Job says so.
    await p.kubectl(['-n', ns, 'delete', 'configmap', 'uyuni-cdk-history']);
    const other = await runScript('backup-record.sh', { ...env, HISTORY_CONFIGMAP: 'uyuni-cdk-other' });
    expect(other.code).toBe(1);
    expect(other.out).toMatch(/reading ConfigMap uyuni-cdk-other: HTTP 403/);
    // Without the history at all (a server no run recorded yet): a record without identity.
    const none = await runScript('backup-record.sh', env);
    expect(none.code).toBe(0);
    expect((JSON.parse(fs.readFileSync(path.join(backups, '.record.json'), 'utf8')) as BackupRecord).planIdentity).toBeNull();
  });
});
