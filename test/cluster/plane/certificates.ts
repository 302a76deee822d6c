/**
 * What cert-manager would write, for the real control plane (no cert-manager controller runs
 * there): Issuers and ClusterIssuers get `Ready=True` (a CA issuer only once its Secret exists),
 * and a Certificate whose issuer is Ready gets its Secret (`kubernetes.io/tls`: a real certificate
 * for its dnsNames, `tls.key`, `ca.crt`) and `Ready=True`, as cert-manager's certificates
 * controller reports it. As cert-manager signs: a selfSigned Issuer's certificate signs itself
 * (ca.crt: itself), a CA Issuer's is signed by the key of its Secret (ca.crt: that CA), anything
 * else by the plane's CA. A Certificate whose Secret names another issuer than its issuerRef
 * (cert-manager's "IncorrectIssuer" trigger: a CA rotation's phase 2) is issued again. Runs in
 * the fake kubelet's process.
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { CoreV1Api, CustomObjectsApi, KubeConfig, KubernetesObject, PatchStrategy, makeInformer, setHeaderOptions } from '@kubernetes/client-node';

const GROUP = 'cert-manager.io';
const VERSION = 'v1';
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

interface CmObject extends KubernetesObject {
  spec?: {
    secretName?: string; dnsNames?: string[]; commonName?: string; isCA?: boolean;
    issuerRef?: { name: string; kind?: string }; ca?: { secretName: string }; selfSigned?: object;
  };
  status?: { conditions?: Array<{ type: string; status: string; observedGeneration?: number }> };
}

export class FakeCertManager {
  private readonly core: CoreV1Api;
  private readonly custom: CustomObjectsApi;
  private readonly informers: Array<{ stop(): Promise<void> }> = [];
  private stopped = false;

  constructor(private readonly kc: KubeConfig, private readonly ca: { cert: string; key: string }, private readonly log: (l: string) => void) {
    this.core = kc.makeApiClient(CoreV1Api);
    this.custom = kc.makeApiClient(CustomObjectsApi);
  }

  async start(): Promise<void> {
    for (const plural of ['issuers', 'clusterissuers', 'certificates']) {
      const list = () => this.custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural }) as never;
      const informer = makeInformer<CmObject>(this.kc, `/apis/${GROUP}/${VERSION}/${plural}`, list);
      const seen = (o: CmObject) => { void this.reconcile(plural, o).catch((e) => this.log(`${plural} ${o.metadata?.namespace ?? ''}/${o.metadata?.name}: ${(e as Error).message}`)); };
      informer.on('add', seen);
      informer.on('update', seen);
      informer.on('error', () => { if (!this.stopped) setTimeout(() => { void informer.start().catch(() => undefined); }, 1000); });
      await informer.start();
      this.informers.push(informer);
    }
    // A CA issuer waits for its Secret, and a Certificate for its issuer. cert-manager hears
    // both: its issuer controllers requeue the issuers a Secret event touches
    // (pkg/controller/issuers/generic_issuer_controller.go `secretChecker`, cert-manager
    // c4a84e56694baaff1e2bbeaeaa5c64391f8ac933) and its certificate-request controllers the
    // requests of an issuer that changed (pkg/controller/certificaterequests/controller.go
    // `handleGenericIssuer`, 0c5694723f285f2925aac9bc459af9d5b74fe0f6). Here: whatever this fake
    // made Ready or issued starts another look at once (`kick`), and a look every 2 s finds
    // what others wrote (a CA Secret a suite creates). Before, only the 2 s look did, and a
    // chain of three (CA certificate, CA issuer, its certificates) took 0.1-4 s by luck.
    this.lookIn(2000);
  }

  private readonly sweep: { running: boolean; again: boolean; timer?: NodeJS.Timeout } = { running: false, again: false };

  /** Look at every issuer and certificate once more, soon (one look at a time; a kick during one asks for another). */
  private kick(): void {
    if (this.sweep.running) this.sweep.again = true;
    else this.lookIn(0);
  }

  /** The next look, in `ms` (the one planned before is dropped). */
  private lookIn(ms: number): void {
    clearTimeout(this.sweep.timer);
    this.sweep.timer = setTimeout(() => { void this.look(); }, ms);
    this.sweep.timer.unref();
  }

  private async look(): Promise<void> {
    if (this.stopped) return;
    this.sweep.running = true;
    try {
      do {
        this.sweep.again = false;
        for (const plural of ['issuers', 'clusterissuers', 'certificates']) {
          const list = await this.custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural }).catch(() => ({ items: [] })) as { items: CmObject[] };
          for (const o of list.items) await this.reconcile(plural, o).catch(() => undefined);
        }
      } while (this.sweep.again && !this.stopped);
    } finally {
      this.sweep.running = false;
    }
    if (!this.stopped) this.lookIn(2000);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.sweep.timer);
    await Promise.all(this.informers.map((i) => i.stop().catch(() => undefined)));
  }

  private ready(o: CmObject): boolean {
    return Boolean(o.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True' && (c.observedGeneration ?? 0) >= (o.metadata?.generation ?? 0)));
  }

  private async setReady(plural: string, o: CmObject, reason: string, message: string): Promise<void> {
    const body = { status: { conditions: [{ type: 'Ready', status: 'True', reason, message, lastTransitionTime: new Date().toISOString(), observedGeneration: o.metadata?.generation }] } };
    const name = o.metadata!.name!;
    if (o.metadata?.namespace) {
      await this.custom.patchNamespacedCustomObjectStatus({ group: GROUP, version: VERSION, plural, namespace: o.metadata.namespace, name, body }, mergePatch);
    } else {
      await this.custom.patchClusterCustomObjectStatus({ group: GROUP, version: VERSION, plural, name, body }, mergePatch);
    }
  }

  private async secretExists(namespace: string, name: string): Promise<boolean> {
    try {
      await this.core.readNamespacedSecret({ name, namespace });
      return true;
    } catch (e) {
      if ((e as { code?: number }).code === 404) return false;
      throw e;
    }
  }

  private async issuerReady(ns: string, ref: { name: string; kind?: string }): Promise<boolean> {
    try {
      const o = (ref.kind === 'ClusterIssuer'
        ? await this.custom.getClusterCustomObject({ group: GROUP, version: VERSION, plural: 'clusterissuers', name: ref.name })
        : await this.custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, plural: 'issuers', namespace: ns, name: ref.name })) as CmObject;
      return this.ready(o);
    } catch {
      return false;
    }
  }

  private async reconcile(plural: string, o: CmObject): Promise<void> {
    if (this.stopped || o.metadata?.deletionTimestamp || this.ready(o)) return;
    const ns = o.metadata?.namespace ?? 'cert-manager';
    if (plural !== 'certificates') {
      if (o.spec?.ca && !(await this.secretExists(ns, o.spec.ca.secretName))) return;
      await this.setReady(plural, o, 'KeyPairVerified', 'Signing CA verified');
      this.kick();
      return;
    }
    if (!o.spec?.issuerRef || !o.spec.secretName || !(await this.issuerReady(ns, o.spec.issuerRef))) return;
    const existing = await this.core.readNamespacedSecret({ name: o.spec.secretName, namespace: ns }).catch((e) => {
      if ((e as { code?: number }).code === 404) return undefined;
      throw e;
    });
    if (!existing || existing.metadata?.annotations?.['cert-manager.io/issuer-name'] !== o.spec.issuerRef.name) {
      const pem = this.sign(o, await this.signer(ns, o.spec.issuerRef));
      const metadata = { name: o.spec.secretName, namespace: ns, annotations: { 'cert-manager.io/certificate-name': o.metadata!.name!, 'cert-manager.io/issuer-name': o.spec.issuerRef.name, 'cert-manager.io/issuer-kind': o.spec.issuerRef.kind ?? 'Issuer' } };
      const data = { 'tls.crt': Buffer.from(pem.cert).toString('base64'), 'tls.key': Buffer.from(pem.key).toString('base64'), 'ca.crt': Buffer.from(pem.ca).toString('base64') };
      if (existing) {
        await this.core.patchNamespacedSecret({ name: o.spec.secretName, namespace: ns, body: { metadata: { annotations: metadata.annotations }, data } }, mergePatch);
        this.log(`certificates ${ns}/${o.metadata!.name}: issued again by ${o.spec.issuerRef.name}`);
      } else {
        await this.core.createNamespacedSecret({ namespace: ns, body: { metadata, type: 'kubernetes.io/tls', data } })
          .catch((e) => { if ((e as { code?: number }).code !== 409) throw e; });
      }
    }
    await this.setReady(plural, o, 'Ready', 'Certificate is up to date and has not expired');
    this.kick();
  }

  /**
   * Who signs for an issuer: `self` (selfSigned), the CA of a CA Issuer's Secret (its tls.crt and
   * tls.key), or the plane's CA (a ClusterIssuer, a CA Secret without a PEM certificate and key).
   */
  private async signer(ns: string, ref: { name: string; kind?: string }): Promise<'self' | { cert: string; key: string }> {
    const plane = { cert: fs.readFileSync(this.ca.cert, 'utf8'), key: fs.readFileSync(this.ca.key, 'utf8') };
    if (ref.kind === 'ClusterIssuer') return plane;
    const issuer = await this.custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, plural: 'issuers', namespace: ns, name: ref.name }) as CmObject;
    if (issuer.spec?.selfSigned) return 'self';
    if (!issuer.spec?.ca) return plane;
    const secret = await this.core.readNamespacedSecret({ name: issuer.spec.ca.secretName, namespace: ns });
    const cert = secret.data?.['tls.crt'];
    const key = secret.data?.['tls.key'];
    const pem = { cert: Buffer.from(cert ?? '', 'base64').toString('utf8'), key: Buffer.from(key ?? '', 'base64').toString('utf8') };
    // a suite's stand-in CA Secret (the migration's `tls.crt: c`) cannot sign: the plane's CA does, as before
    return /-----BEGIN CERTIFICATE-----/.test(pem.cert) && /-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(pem.key) ? pem : plane;
  }

  /** A certificate for the Certificate's names, signed as its issuer signs (openssl, as the plane's PKI), with the `ca.crt` cert-manager writes. */
  private sign(o: CmObject, by: 'self' | { cert: string; key: string }): { cert: string; key: string; ca: string } {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fake-cert-manager-'));
    try {
      const names = o.spec?.dnsNames?.length ? o.spec.dnsNames : [o.spec?.commonName ?? o.metadata!.name!];
      const cn = (o.spec?.commonName ?? names[0]).slice(0, 64);
      const ca = o.spec?.isCA ? 'TRUE' : 'FALSE';
      fs.writeFileSync(path.join(dir, 'ext'), `basicConstraints=critical,CA:${ca}\n${o.spec?.isCA ? 'keyUsage=critical,keyCertSign,cRLSign,digitalSignature\n' : ''}subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}\n`);
      const run = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
      run(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'tls.key', '-out', 'tls.csr', '-subj', `/CN=${cn}`]);
      if (by === 'self') {
        run(['x509', '-req', '-in', 'tls.csr', '-key', 'tls.key', '-days', '90', '-extfile', 'ext', '-out', 'tls.crt']);
      } else {
        fs.writeFileSync(path.join(dir, 'signer.crt'), by.cert);
        fs.writeFileSync(path.join(dir, 'signer.key'), by.key, { mode: 0o600 });
        run(['x509', '-req', '-in', 'tls.csr', '-CA', 'signer.crt', '-CAkey', 'signer.key', '-CAcreateserial', '-CAserial', 'serial', '-days', '90', '-extfile', 'ext', '-out', 'tls.crt']);
      }
      const cert = fs.readFileSync(path.join(dir, 'tls.crt'), 'utf8');
      // cert-manager's ca.crt: the self-signed certificate itself, or the signing CA (the first of its chain)
      const caCert = by === 'self' ? cert : (by.cert.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----\n?/)?.[0] ?? by.cert);
      return { cert, key: fs.readFileSync(path.join(dir, 'tls.key'), 'utf8'), ca: caCert };
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
}
