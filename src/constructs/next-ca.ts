import { Construct } from 'constructs';
import { Certificate, CertificateSpecPrivateKeyAlgorithm, CertificateSpecPrivateKeyRotationPolicy, Issuer } from '../../imports/cert-manager.io';
import { commonLabels } from '../model/labels';
import { TLS_NAMES } from '../model/tls';
import type { CaSubject } from './uyuni-tls';

export interface NextCaProps {
  readonly namespace: string;
  /** The CA's name (commonName and dnsNames), as the first CA's: the server's FQDN. */
  readonly fqdn: string;
  readonly subject: CaSubject;
  /** CA lifetime. */
  readonly caDuration: string;
  /**
   * The new CA's Secret, when it is given (a third-party CA with tls.crt and tls.key): no
   * self-signed root is made. @default a new self-signed root, Secret uyuni-ca-next
   */
  readonly secret?: string;
}

/**
 * The new CA of a CA rotation (uyuni-tools c46f1238 `mgradm ssl addca`: a new root CA beside the
 * running one), as cert-manager objects: a new self-signed root (Issuer uyuni-next-root-issuer →
 * Certificate uyuni-ca-next, isCA; never renewed into a new key, which would be another
 * rotation) or the given Secret, and the CA Issuer uyuni-issuer-next that phase 2 issues the
 * server's certificates from. Nothing here touches the running CA or its certificates.
 */
export class NextCa extends Construct {
  /** The Secret with the new CA's certificate (ca.crt, tls.crt). */
  public readonly secret: string;

  constructor(scope: Construct, id: string, props: NextCaProps) {
    super(scope, id);
    const metadata = (name: string) => ({ name, namespace: props.namespace, labels: commonLabels('uyuni', 'tls') });
    const { subject } = props;
    this.secret = props.secret ?? TLS_NAMES.nextCa;
    if (!props.secret) {
      new Issuer(this, 'RootIssuer', { metadata: metadata(TLS_NAMES.nextRootIssuer), spec: { selfSigned: {} } });
      new Certificate(this, 'Ca', {
        metadata: metadata(TLS_NAMES.nextCa),
        spec: {
          isCa: true,
          commonName: props.fqdn,
          dnsNames: [props.fqdn],
          secretName: TLS_NAMES.nextCa,
          duration: props.caDuration,
          privateKey: { algorithm: CertificateSpecPrivateKeyAlgorithm.ECDSA, size: 256, rotationPolicy: CertificateSpecPrivateKeyRotationPolicy.NEVER },
          subject: {
            countries: [subject.country],
            provinces: [subject.state],
            localities: [subject.city],
            organizations: [subject.organization],
            organizationalUnits: [subject.organizationalUnit],
          },
          ...(subject.email ? { emailAddresses: [subject.email] } : {}),
          issuerRef: { name: TLS_NAMES.nextRootIssuer, kind: 'Issuer', group: 'cert-manager.io' },
        },
      });
    }
    new Issuer(this, 'CaIssuer', { metadata: metadata(TLS_NAMES.nextCaIssuer), spec: { ca: { secretName: this.secret } } });
  }
}
