import { Construct } from 'constructs';
import { Certificate } from '../../imports/cert-manager.io';
import { commonLabels, selectorLabels } from '../model/labels';
import { TLS_NAMES } from '../model/tls';
import type { Requirement } from '../plan/types';
import { SERVER_CERT_KEY } from './uyuni-tls';

/**
 * The Certificate (and Secret) of a proxy in the server's namespace: one per proxy namespace,
 * and never one of the server's names (uyuni-cert, db-cert, uyuni-ca).
 */
export function proxyCertificateName(proxyNamespace: string): string {
  return `${proxyNamespace}-proxy-cert`;
}

/** The server's CA, which Issuer uyuni-issuer signs with: the server must be installed first. */
export function serverCaRequirement(serverNamespace: string): Requirement {
  return {
    kind: 'Secret',
    name: TLS_NAMES.ca,
    namespace: serverNamespace,
    keys: ['tls.crt'],
    ifMissing: 'fail',
    message: `the server's CA (Issuer ${TLS_NAMES.caIssuer} signs with it): install the server in namespace ${serverNamespace} first, `
      + 'with tls.mode generated or migrated',
  };
}

export interface ProxyCertificateProps {
  /** The server's namespace: where its Issuer is, and so where the Certificate must be. */
  readonly namespace: string;
  /** The Certificate's and its Secret's name. */
  readonly name: string;
  /** The proxy's FQDN: commonName and only dnsName. */
  readonly fqdn: string;
  /** Certificate lifetime (Go duration). */
  readonly duration: string;
  /** Renew this long before expiry. */
  readonly renewBefore: string;
  /** The namespaced Issuer. @default 'uyuni-issuer' */
  readonly issuer?: string;
}

/**
 * A cert-manager Certificate for the proxy, issued by the server's CA Issuer, as uyuni-charts'
 * server-selfsigned README @ fbbe779 has one made for each proxy (`<name>-cert`: RSA 2048 PKCS1
 * rotated always, server auth, the proxy's FQDN). A namespaced Issuer issues only into its own
 * namespace, so the Certificate lives in the server's; the user copies its Secret into the
 * proxy's namespace as `proxy-cert` (and its `ca.crt` as ConfigMap `uyuni-ca`), as that README does.
 */
export class ProxyCertificate extends Construct {
  public readonly certificate: Certificate;

  constructor(scope: Construct, id: string, props: ProxyCertificateProps) {
    super(scope, id);
    this.certificate = new Certificate(this, 'Resource', {
      metadata: { name: props.name, namespace: props.namespace, labels: commonLabels('uyuni-proxy', 'tls') },
      spec: {
        secretName: props.name,
        secretTemplate: { labels: selectorLabels('uyuni-proxy', 'tls') },
        isCa: false,
        commonName: props.fqdn,
        dnsNames: [props.fqdn],
        duration: props.duration,
        renewBefore: props.renewBefore,
        ...SERVER_CERT_KEY,
        issuerRef: { name: props.issuer ?? TLS_NAMES.caIssuer, kind: 'Issuer', group: 'cert-manager.io' },
      },
    });
  }
}
