import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import type { PartOf } from '../model/labels';
import type { GeneratedValue } from '../plan/types';
import { ScriptJob } from './script-job';
import { stepAccount } from './step-account';

/** A Secret the Job makes when it is missing: the shape of a plan requirement with `generate`. */
export interface GeneratedSecret {
  readonly name: string;
  /** e.g. `kubernetes.io/basic-auth`. */
  readonly type: string;
  /** How each key's value is made: a literal (a user name) or random characters. */
  readonly keys: Readonly<Record<string, GeneratedValue>>;
}

export interface CredentialsJobProps {
  readonly namespace: string;
  /** At least one. */
  readonly secrets: readonly GeneratedSecret[];
  /** An image with sh, curl, base64, tr and head (the server image has them). */
  readonly image: string;
  readonly imagePullPolicy: string;
  /** @default no pull secret */
  readonly imagePullSecrets?: k8s.LocalObjectReference[];
  /** Labels of the Secrets it creates (the plan's selector, so `destroy` and `status` find them). */
  readonly secretLabels: Readonly<Record<string, string>>;
  /** @default 'uyuni' */
  readonly partOf?: PartOf;
}

const SECRET_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const SECRET_TYPE = /^[A-Za-z0-9./-]+$/;
const SECRET_KEY = /^[-._a-zA-Z0-9]+$/;
/** What the script accepts as a literal: the line format splits on blanks and is pasted into JSON. */
const LITERAL = /^[A-Za-z0-9._@-]*$/;

/**
 * Job `uyuni-credentials` (L2) with its ServiceAccount, Role and RoleBinding: creates each of
 * `secrets` that is missing, with random values from the pod's /dev/urandom, and never changes
 * one that exists (src/scripts/create-credentials.sh). The Role may get exactly these Secrets and
 * create Secrets in the namespace (create cannot be limited to names), nothing else. For GitOps
 * tools, which apply dist/ without the runtime that otherwise makes them (docs/gitops.md).
 */
export class CredentialsJob extends Construct {
  static readonly NAME = 'uyuni-credentials';
  /** The script's SECRETS lines: `<name> <type> <key>=literal:<value>|<key>=random:<length> …`. */
  public readonly secretsSpec: string;
  public readonly job: ScriptJob;

  constructor(scope: Construct, id: string, props: CredentialsJobProps) {
    super(scope, id);
    if (props.secrets.length === 0) throw new Error('CredentialsJob: secrets must list at least one Secret');
    this.secretsSpec = props.secrets.map(specLine).join('\n');
    const name = CredentialsJob.NAME;
    stepAccount(this, props.namespace, name, props.partOf ?? 'uyuni', [
      { apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: props.secrets.map((s) => s.name) },
      { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
    ]);
    this.job = new ScriptJob(this, 'Job', {
      name,
      namespace: props.namespace,
      partOf: props.partOf,
      image: props.image,
      imagePullPolicy: props.imagePullPolicy,
      imagePullSecrets: props.imagePullSecrets,
      serviceAccountName: name,
      script: 'create-credentials.sh',
      env: [
        { name: 'NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
        { name: 'SECRETS', value: this.secretsSpec },
        { name: 'SECRET_LABELS', value: JSON.stringify(props.secretLabels) },
      ],
      // Nothing of the image's root is needed: /dev/urandom, /tmp and the token are readable by anyone.
      securityContext: {
        runAsNonRoot: true, runAsUser: 65534, runAsGroup: 65534, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] },
      },
    });
  }
}

function specLine(s: GeneratedSecret): string {
  const at = `CredentialsJob: secrets: ${s.name}`;
  if (!SECRET_NAME.test(s.name) || s.name.length > 253) throw new Error(`${at}: name must be a DNS-1123 subdomain`);
  if (!SECRET_TYPE.test(s.type)) throw new Error(`${at}: type "${s.type}" must be letters, digits, ".", "/" and "-"`);
  const items = Object.entries(s.keys).map(([key, how]) => {
    if (!SECRET_KEY.test(key)) throw new Error(`${at}: key "${key}" must be letters, digits, "-", "_" and "."`);
    if ('literal' in how) {
      if (!LITERAL.test(how.literal)) throw new Error(`${at}: keys.${key}.literal may hold only letters, digits, ".", "_", "@" and "-"`);
      return `${key}=literal:${how.literal}`;
    }
    const n = how.random.length;
    if (!Number.isInteger(n) || n < 1 || n > 4096) throw new Error(`${at}: keys.${key}.random.length must be a whole number from 1 to 4096`);
    return `${key}=random:${n}`;
  });
  if (items.length === 0) throw new Error(`${at}: keys must name at least one key`);
  return [s.name, s.type, ...items].join(' ');
}
