import { Construct } from 'constructs';
import type { ImageRef } from '../model/images';
import { commonLabels } from '../model/labels';
import { LABELS, MANAGED_BY } from '../plan/types';
import { PROXY_CONFIG, PROXY_FILES } from './proxy-config';
import { ScriptJob } from './script-job';
import { stepAccount } from './step-account';

export interface ProxyCertsJobProps {
  /** The proxy's namespace. */
  readonly namespace: string;
  /** The proxy-httpd image: its python3 and PyYAML read the tarball (uyuni-configure.py does). */
  readonly image: ImageRef;
}

/** Where the Job mounts the tarball's config.yaml and httpd.yaml (as the proxy's httpd does). */
const TARBALL_DIR = '/etc/uyuni';

/**
 * Job `uyuni-proxy-certs` and the account it runs as: makes Secret proxy-cert and ConfigMap
 * uyuni-ca from the config tarball (proxy-helm templates/cert.yaml @ 00f177a9), in the cluster,
 * so the key never passes through dist/ or the runtime. It reads ConfigMap proxy-configmap and
 * Secret httpd (mounted like the proxy's httpd-volume) and may create those two objects and get
 * and replace only them (src/scripts/proxy-certs.py: the user's own objects are never changed).
 */
export class ProxyCertsJob extends Construct {
  public static readonly NAME = 'uyuni-proxy-certs';
  public readonly job: ScriptJob;

  constructor(scope: Construct, id: string, props: ProxyCertsJobProps) {
    super(scope, id);
    const name = ProxyCertsJob.NAME;
    // create cannot be limited to names; get and update can, to the two objects it makes.
    stepAccount(this, props.namespace, name, 'uyuni-proxy', [
      { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'update'], resourceNames: [PROXY_CONFIG.cert] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'update'], resourceNames: [PROXY_CONFIG.ca] },
      { apiGroups: [''], resources: ['secrets', 'configmaps'], verbs: ['create'] },
    ]);
    this.job = new ScriptJob(this, 'Job', {
      name,
      namespace: props.namespace,
      partOf: 'uyuni-proxy',
      image: props.image.image,
      imagePullPolicy: props.image.pullPolicy,
      imagePullSecrets: props.image.pullSecrets ? [...props.image.pullSecrets] : undefined,
      serviceAccountName: name,
      script: 'proxy-certs.py',
      interpreter: 'python3',
      env: [
        { name: 'NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
        { name: 'CONFIG_FILE', value: `${TARBALL_DIR}/${PROXY_FILES.config}` },
        { name: 'HTTPD_FILE', value: `${TARBALL_DIR}/${PROXY_FILES.httpd}` },
        { name: 'CERT_SECRET', value: PROXY_CONFIG.cert },
        { name: 'CA_CONFIGMAP', value: PROXY_CONFIG.ca },
        // The plan's selector labels: destroy removes them with the plan, as helm uninstall does.
        { name: 'OBJECT_LABELS', value: JSON.stringify(commonLabels('uyuni-proxy', 'proxy')) },
        { name: 'MANAGED_BY_LABEL', value: LABELS.managedBy },
        { name: 'MANAGED_BY', value: MANAGED_BY },
      ],
      volumes: [{
        name: 'tarball',
        projected: {
          defaultMode: 0o400,
          sources: [
            { configMap: { name: PROXY_CONFIG.configMap, items: [{ key: PROXY_FILES.config, path: PROXY_FILES.config }] } },
            { secret: { name: PROXY_CONFIG.httpd, items: [{ key: PROXY_FILES.httpd, path: PROXY_FILES.httpd }] } },
          ],
        },
      }],
      volumeMounts: [{ name: 'tarball', mountPath: TARBALL_DIR, readOnly: true }],
    });
  }
}
