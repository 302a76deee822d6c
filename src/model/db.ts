/**
 * The database endpoints (docs/upstream.md), defined once: the ConfigMap
 * uyuni-config, the server's environment, the db-waiter, the Services and the certificate's
 * names all read them from here.
 */
export const PG_PORT = 5432;

export const DATABASES = {
  /** The product database. */
  product: { host: 'db', name: 'susemanager' },
  /** The report database (same PostgreSQL, its own Service name). */
  report: { host: 'reportdb', name: 'reportdb' },
} as const;

/** The PostgreSQL major version of the current server-postgresql image (5.2.5 and later). */
export const PG_MAJOR = 18;

/**
 * The PostgreSQL user and group (999) of the server-postgresql image and of the
 * server-database-migration image that runs pg_upgrade (its Dockerfile @ 07f6499e).
 */
export const POSTGRES_UID = 999;
