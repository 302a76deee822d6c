import type { Requirement } from '../plan/types';

/**
 * Credential Secrets (kubernetes.io/basic-auth keys `username`, `password`), referenced by name
 * only: the runtime creates the missing ones with random passwords at run time, so no secret
 * value is ever written into dist/.
 */
export interface CredentialSpec {
  /** Secret name. */
  readonly secret: string;
  /** Environment variable prefix in the containers: `<PREFIX>_USER`, `<PREFIX>_PASS`. */
  readonly envPrefix: string;
  /** The user name the runtime writes when it creates the Secret (not a secret). */
  readonly defaultUser: string;
}

export const CREDENTIALS = {
  admin: { secret: 'admin-credentials', envPrefix: 'ADMIN', defaultUser: 'admin' },
  db: { secret: 'db-credentials', envPrefix: 'MANAGER', defaultUser: 'spacewalk' },
  reportdb: { secret: 'reportdb-credentials', envPrefix: 'REPORT_DB', defaultUser: 'pythia_susemanager' },
  dbAdmin: { secret: 'db-admin-credentials', envPrefix: 'POSTGRES', defaultUser: 'postgres' },
} as const satisfies Record<string, CredentialSpec>;

/** The optional SUSE Customer Center credentials: used when the user created them. */
export const SCC_CREDENTIALS: CredentialSpec = { secret: 'scc-credentials', envPrefix: 'SCC', defaultUser: '' };

/** `<PREFIX>_USER` and `<PREFIX>_PASS` from the Secret. */
export function credentialEnv(c: CredentialSpec, optional = false) {
  const ref = (key: string) => ({ secretKeyRef: { name: c.secret, key, ...(optional ? { optional: true } : {}) } });
  const passName = c.envPrefix === 'POSTGRES' ? 'POSTGRES_PASSWORD' : `${c.envPrefix}_PASS`;
  return [
    { name: `${c.envPrefix}_USER`, valueFrom: ref('username') },
    { name: passName, valueFrom: ref('password') },
  ];
}

/** The plan requirement that makes the runtime create the Secret when it is missing. */
export function credentialRequirement(c: CredentialSpec, namespace: string): Requirement {
  return {
    kind: 'Secret',
    name: c.secret,
    namespace,
    keys: ['username', 'password'],
    ifMissing: 'generate',
    generate: { username: { literal: c.defaultUser }, password: { random: { length: 32 } } },
    message: `Secret ${c.secret} (keys username, password) holds the ${c.envPrefix} credentials`,
  };
}
