/**
 * TLS names and the paths where the current images read certificates (docs/upstream.md,
 * §3.1, §8), defined once.
 */
export const TLS_NAMES = {
  /** Self-signed Issuer that signs the generated CA. */
  rootIssuer: 'uyuni-root-issuer',
  /** The CA: Certificate and Secret (generated), or the user's Secret (migrated). */
  ca: 'uyuni-ca',
  /** The CA Issuer every leaf certificate comes from. */
  caIssuer: 'uyuni-issuer',
  /** The server's certificate (public FQDN): Secret with tls.crt, tls.key, ca.crt. */
  serverCert: 'uyuni-cert',
  /** The database's certificate (db, reportdb, FQDN): Secret with tls.crt, tls.key, ca.crt. */
  dbCert: 'db-cert',
  /** A CA rotation's self-signed Issuer for the new root (generated). */
  nextRootIssuer: 'uyuni-next-root-issuer',
  /** A CA rotation's new CA: Certificate and Secret (generated). */
  nextCa: 'uyuni-ca-next',
  /** A CA rotation's Issuer of the new CA (cert-manager issues the certificates from it in phase 2). */
  nextCaIssuer: 'uyuni-issuer-next',
} as const;

/**
 * The server pod's annotation that names the CA rotation phase its trust comes from: a changed
 * value restarts the pods, which read the CA files only at their start (subPath mounts never change).
 */
export const CA_ROTATION_ANNOTATION = 'uyuni-cdk.io/ca-rotation';

const ANCHORS = '/etc/pki/trust/anchors';

export const CA_PATHS = {
  /** The server's own CA, read by the setup and update-ca-certificates. */
  local: `${ANCHORS}/LOCAL-RHN-ORG-TRUSTED-SSL-CERT`,
  /** The CA clients download over salt. */
  salt: '/usr/share/susemanager/salt/certs/RHN-ORG-TRUSTED-SSL-CERT',
  /** The CA clients download over HTTP. */
  pub: '/srv/www/htdocs/pub/RHN-ORG-TRUSTED-SSL-CERT',
  /** The database's CA (MANAGER_DB_CA_CERT, REPORT_DB_CA_CERT). */
  db: `${ANCHORS}/DB-RHN-ORG-TRUSTED-SSL-CERT`,
} as const;

/** The server's certificate and key, as items of a Secret mounted at /etc/pki/. */
export const SERVER_TLS_ITEMS = { cert: 'tls/certs/spacewalk.crt', key: 'tls/private/spacewalk.key' } as const;
/** The database's certificate and key, as items of Secret db-cert mounted at /etc/pki/. */
export const DB_TLS_ITEMS = {
  cert: 'tls/certs/spacewalk.crt',
  key: 'tls/private/pg-spacewalk.key',
  ca: 'trust/anchors/LOCAL-RHN-ORG-TRUSTED-SSL-CERT',
} as const;
/** Where a Secret with those items is mounted. */
export const PKI_DIR = '/etc/pki/';

/** Mode 0400: keys readable by their owner only (256 in the manifests). */
export const KEY_MODE = 0o400;
/** Mode 0644 (420 in the manifests): certificates. */
export const CERT_MODE = 0o644;
