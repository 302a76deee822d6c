import type { Requirement } from '../plan/types';

/**
 * Credential Secrets (kubernetes.io/basic-auth keys `username`, `password`, as the chart expects
 * them), referenced by name only: the runtime creates the missing ones with random passwords at
 * run time, so no secret value is ever written into dist/.
 */
export interface CredentialSpec {
  /** Secret name. */
  readonly secret: string;
  /** The containers' variable for the user name. */
  readonly userEnv: string;
  /** The containers' variable for the password. */
  readonly passEnv: string;
  /** The user name the runtime writes when it creates the Secret (not a secret). */
  readonly defaultUser: string;
  /** What it is, for messages. */
  readonly role: string;
}

export const CREDENTIALS = {
  admin: { secret: 'admin-credentials', userEnv: 'ADMIN_USER', passEnv: 'ADMIN_PASS', defaultUser: 'admin', role: 'the first web UI administrator' },
  db: { secret: 'db-credentials', userEnv: 'MANAGER_USER', passEnv: 'MANAGER_PASS', defaultUser: 'spacewalk', role: 'the product database user' },
  reportdb: { secret: 'reportdb-credentials', userEnv: 'REPORT_DB_USER', passEnv: 'REPORT_DB_PASS', defaultUser: 'pythia_susemanager', role: 'the report database user' },
  dbAdmin: { secret: 'db-admin-credentials', userEnv: 'POSTGRES_USER', passEnv: 'POSTGRES_PASSWORD', defaultUser: 'postgres', role: 'the PostgreSQL administrator' },
} as const satisfies Record<string, CredentialSpec>;

/** A user-named basic-auth Secret (the SUSE Customer Center credentials, `server.sccSecret`). */
export function sccCredentials(secret: string): CredentialSpec {
  return { secret, userEnv: 'SCC_USER', passEnv: 'SCC_PASS', defaultUser: '', role: 'the SUSE Customer Center credentials' };
}

/** The user and password variables from the Secret. */
export function credentialEnv(c: CredentialSpec) {
  const ref = (key: string) => ({ secretKeyRef: { name: c.secret, key } });
  return [
    { name: c.userEnv, valueFrom: ref('username') },
    { name: c.passEnv, valueFrom: ref('password') },
  ];
}

/** The user variable only (init containers that log in without a password). */
export function credentialUserEnv(c: CredentialSpec) {
  return { name: c.userEnv, valueFrom: { secretKeyRef: { name: c.secret, key: 'username' } } };
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
    secretType: 'kubernetes.io/basic-auth',
    message: `Secret ${c.secret} (keys username, password) holds ${c.role}`,
  };
}

/** A Secret the user must create (no value can be made up for it). */
export function userCredentialRequirement(c: CredentialSpec, namespace: string, field: string): Requirement {
  return {
    kind: 'Secret',
    name: c.secret,
    namespace,
    keys: ['username', 'password'],
    ifMissing: 'fail',
    message: `${field} names Secret ${c.secret}, ${c.role}: create it with: kubectl -n ${namespace} create secret generic ${c.secret} `
      + '--type=kubernetes.io/basic-auth --from-literal=username=<user> --from-literal=password=<password>',
  };
}
