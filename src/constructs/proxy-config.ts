import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { commonLabels } from '../model/labels';
import { TLS_NAMES } from '../model/tls';
import type { Requirement } from '../plan/types';

/**
 * The proxy's configuration objects (proxy-helm templates/config.yaml @ c19024a5 and
 * templates/deployment.yaml @ 1ad19a5d), defined once. All but `tuning` are the user's: they
 * come from the proxy config tarball the server generates (config.yaml, httpd.yaml, ssh.yaml;
 * `cert` and `ca` made from it in the cluster by Job uyuni-proxy-certs, as proxy-helm's
 * templates/cert.yaml @ 00f177a9 renders them, or by the user), hold keys, and are never
 * written into dist/.
 */
export const PROXY_CONFIG = {
  /** ConfigMap with `config.yaml` (server, proxy_fqdn, email, max_cache_size_mb, log_level). */
  configMap: 'proxy-configmap',
  /** Secret with `httpd.yaml`. */
  httpd: 'httpd',
  /** Secret with `ssh.yaml`. */
  ssh: 'ssh',
  /** TLS Secret (`tls.crt`, `tls.key`): the proxy's certificate for its FQDN. */
  cert: 'proxy-cert',
  /** ConfigMap with `ca.crt`: the CA that signed `proxy-cert` (the server's, named like its Secret). */
  ca: TLS_NAMES.ca,
  /** Ours: ConfigMap with the tuning files (no secret in them). */
  tuning: 'proxy-tuning',
} as const;

/** The files of the config tarball, each the key of its object. */
export const PROXY_FILES = { config: 'config.yaml', httpd: 'httpd.yaml', ssh: 'ssh.yaml' } as const;

/** The keys of ConfigMap proxy-tuning (the chart's keys of proxy-configmap). */
export const TUNING_KEYS = { squid: 'squid_tuning', ssh: 'ssh_tuning', apache: 'apache_tuning' } as const;

/** Where the proxy's certificate is issued, when the server's Issuer issues it. */
export interface IssuedCertificate {
  /** The server's namespace. */
  readonly namespace: string;
  /** The Secret cert-manager writes there. */
  readonly secret: string;
}

export interface ProxyConfigRequirementsProps {
  /** The proxy's namespace. */
  readonly namespace: string;
  /** The proxy's FQDN (its certificate must name it). */
  readonly fqdn: string;
  /** The certificate is issued on the server side and copied. @default the user brings it */
  readonly issued?: IssuedCertificate;
  /**
   * The Job that makes proxy-cert and uyuni-ca from the tarball, when there is one (proxy-helm
   * templates/cert.yaml @ 00f177a9). @default none: the user creates them
   */
  readonly derivedBy?: string;
}

/** A shell command that prints one key of a Secret. */
const secretKey = (namespace: string, secret: string, key: string) =>
  `kubectl -n ${namespace} get secret ${secret} -o jsonpath='{.data.${key.replace('.', '\\.')}}' | base64 -d`;

/** What the proxy's pods mount and the user creates, with the commands that create them. */
export function proxyConfigRequirements(props: ProxyConfigRequirementsProps): Requirement[] {
  const ns = props.namespace;
  const tarball = 'the proxy configuration: generate it on the server (Systems > Proxy Configuration, or the proxy.containerConfig API), '
    + 'then: tar xf config.tar.gz && ';
  const need = (kind: Requirement['kind'], name: string, keys: string[], message: string): Requirement =>
    ({ kind, name, namespace: ns, keys, ifMissing: 'fail', message });
  const { issued, derivedBy } = props;
  const fromTarball = (fields: string) => (derivedBy
    ? `made by Job ${derivedBy} from the tarball's ${fields} (kubectl -n ${ns} logs job/${derivedBy}); without them in the tarball, create it: `
    : '');
  // `create --dry-run=client -o yaml | kubectl apply` also replaces an older copy (after a renewal).
  const apply = `--dry-run=client -o yaml | kubectl -n ${ns} apply -f -`;
  return [
    need('ConfigMap', PROXY_CONFIG.configMap, [PROXY_FILES.config],
      `${tarball}kubectl -n ${ns} create configmap ${PROXY_CONFIG.configMap} --from-file=${PROXY_FILES.config}`),
    need('Secret', PROXY_CONFIG.httpd, [PROXY_FILES.httpd],
      `${tarball}kubectl -n ${ns} create secret generic ${PROXY_CONFIG.httpd} --from-file=${PROXY_FILES.httpd}`),
    need('Secret', PROXY_CONFIG.ssh, [PROXY_FILES.ssh],
      `${tarball}kubectl -n ${ns} create secret generic ${PROXY_CONFIG.ssh} --from-file=${PROXY_FILES.ssh}`),
    need('Secret', PROXY_CONFIG.cert, ['tls.crt', 'tls.key'], issued
      ? `the proxy's certificate, issued in namespace ${issued.namespace} as Secret ${issued.secret}: copy it with `
        + `${secretKey(issued.namespace, issued.secret, 'tls.crt')} >tls.crt && ${secretKey(issued.namespace, issued.secret, 'tls.key')} >tls.key && `
        + `kubectl -n ${ns} create secret tls ${PROXY_CONFIG.cert} --cert=tls.crt --key=tls.key ${apply} && rm tls.key`
      : `${fromTarball('httpd.server_crt and httpd.server_key (httpd.yaml)')}the proxy's TLS certificate for ${props.fqdn}, signed by the server's CA: `
        + `kubectl -n ${ns} create secret tls ${PROXY_CONFIG.cert} --cert=<certificate with its chain> --key=<key>`),
    need('ConfigMap', PROXY_CONFIG.ca, ['ca.crt'], issued
      ? `the CA of the proxy's certificate: copy it with ${secretKey(issued.namespace, issued.secret, 'ca.crt')} >ca.crt && `
        + `kubectl -n ${ns} create configmap ${PROXY_CONFIG.ca} --from-file=ca.crt ${apply}`
      : `${fromTarball('ca_crt (config.yaml)')}the CA that signed ${PROXY_CONFIG.cert} (the server's): kubectl -n ${ns} create configmap ${PROXY_CONFIG.ca} --from-file=ca.crt=<CA certificate>`),
  ];
}

export interface ProxyTuningProps {
  readonly namespace: string;
  /** Lines for squid (`/etc/squid/conf.d/squid_tuning.conf`). @default none */
  readonly squid?: string;
  /** Lines for sshd (`/etc/ssh/sshd_config.d/99-tuning.conf`). @default none */
  readonly ssh?: string;
  /** Lines for Apache (`/etc/apache2/conf.d/apache_tuning.conf`). @default none */
  readonly apache?: string;
}

/**
 * ConfigMap `proxy-tuning`: the tuning files the chart keeps in its proxy-configmap
 * (`squid_tuning`, `ssh_tuning`, `apache_tuning`). Ours is separate, because the user makes
 * proxy-configmap from the tarball's config.yaml alone. Every key is always there (empty without
 * tuning), so the projected volumes and the init containers' links always find their file.
 */
export class ProxyTuning extends Construct {
  public readonly configMap: k8s.KubeConfigMap;

  constructor(scope: Construct, id: string, props: ProxyTuningProps) {
    super(scope, id);
    const file = (lines?: string) => (!lines ? '' : lines.endsWith('\n') ? lines : `${lines}\n`);
    this.configMap = new k8s.KubeConfigMap(this, 'Resource', {
      metadata: { name: PROXY_CONFIG.tuning, namespace: props.namespace, labels: commonLabels('uyuni-proxy', 'proxy') },
      data: {
        [TUNING_KEYS.squid]: file(props.squid),
        [TUNING_KEYS.ssh]: file(props.ssh),
        [TUNING_KEYS.apache]: file(props.apache),
      },
    });
  }
}
