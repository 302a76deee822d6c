/**
 * The plan contract: what `dist/<plan>/uyuni.plan` holds.
 *
 * Synth writes it (src/plans/), the runtime reads it (src/runtime/). Neither side imports the
 * other: both depend on src/plan/ only. Documented for humans in docs/plan-format.md; any change
 * here that an older runtime could misread must bump PLAN_FORMAT_VERSION.
 */
import type { WaitCondition } from './waits';

/** Bumped on every incompatible change of the format. */
export const PLAN_FORMAT_VERSION = 1;

/** Label and annotation keys stamped on synthesized objects (and read by the runtime). */
export const LABELS = {
  partOf: 'app.kubernetes.io/part-of',
  component: 'app.kubernetes.io/component',
  managedBy: 'app.kubernetes.io/managed-by',
  /** The plan an object was synthesized for (install, migrate, upgrade, proxy, ...). */
  plan: 'uyuni-cdk.io/plan',
  /** The step (chart) an object belongs to. */
  step: 'uyuni-cdk.io/step',
  /** Stamped by the runtime at apply time: which run applied the object. */
  run: 'uyuni-cdk.io/run',
} as const;

export const ANNOTATIONS = {
  /** sha256 of a step Job's spec; the runtime compares it to decide skip / attach / refuse. */
  specHash: 'uyuni-cdk.io/spec-hash',
  /**
   * The step's index on every object, so Argo CD applies the steps in plan order and waits for each
   * wave to be healthy (a Job: Complete) before the next (docs/gitops.md).
   */
  syncWave: 'argocd.argoproj.io/sync-wave',
} as const;

/**
 * ApplySet keys (KEP-3659), spelt as kubectl spells them: the runtime labels what it applies as
 * members of the set and keeps its parent, so that pruning (ours, `kubectl apply --prune
 * --applyset`) sees one set. Synth writes none of them (docs/runtime.md, "Pruning").
 */
export const APPLYSET = {
  /** On every member: the id of its set. */
  partOf: 'applyset.kubernetes.io/part-of',
  /** On the parent: `applyset-` + base64url(sha256(`<name>.<namespace>.<kind>.<group>`)) + `-v1`. */
  id: 'applyset.kubernetes.io/id',
  /** On the parent: `<tool>/<version>` of the tool that manages the set. */
  tooling: 'applyset.kubernetes.io/tooling',
  /** On the parent: the members' `Kind.group`s, sorted, comma-separated (the kinds a prune lists). */
  containsGroupKinds: 'applyset.kubernetes.io/contains-group-kinds',
  /** On the parent: namespaces of members other than the parent's (ours: none). */
  additionalNamespaces: 'applyset.kubernetes.io/additional-namespaces',
} as const;

/**
 * A server's backup plan is part-of `<server's part-of>` + this: its own ApplySet (so pruning or
 * destroying the server never selects the backup claim), in the server's namespace by design.
 */
export const BACKUP_PART_OF_SUFFIX = '-backup';

/**
 * The same for plan db-basebackup (db.archiving): `<server's part-of>-db-archive`, its own
 * ApplySet beside the server's and the backup's.
 */
export const DB_ARCHIVE_PART_OF_SUFFIX = '-db-archive';

/** The server a part-of belongs with: itself, or the server of its backup or db-archive set. */
export function serverPartOf(partOf: string): string {
  for (const suffix of [BACKUP_PART_OF_SUFFIX, DB_ARCHIVE_PART_OF_SUFFIX]) if (partOf.endsWith(suffix)) return partOf.slice(0, -suffix.length);
  return partOf;
}

/**
 * The ConfigMap in a plan's namespace where the runtime keeps its records (the run history, the
 * server's identity: src/runtime/safety/history.ts, record.ts); a backup records the identity from it.
 */
export const HISTORY_CONFIGMAP = 'uyuni-cdk-history';

/**
 * Continuous database archiving as synth writes it and `status` reads it: the WAL archive's claim
 * and the db pod's container that reports on it (src/model/volumes.ts, src/model/db.ts,
 * src/runtime/verbs/archive-status.ts).
 */
export const WAL_ARCHIVE = { claim: 'var-pgsql-walbackup', statusContainer: 'archive-status' } as const;

/** The value of `app.kubernetes.io/managed-by` on everything we synthesize. */
export const MANAGED_BY = 'uyuni-cdk';

/** A reference to one Kubernetes object of a step. `namespace` is absent for cluster-scoped kinds. */
export interface ObjectRef {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
}

/** What "done" means for one object; the list, and each condition's meaning, is src/plan/waits.ts. */
export type { WaitCondition };

export interface Wait {
  readonly object: ObjectRef;
  readonly for: WaitCondition;
}

/**
 * Something that must exist in the cluster before a step's objects are applied.
 * `ifMissing: 'fail'` stops the run with `message` (the user must create it);
 * `ifMissing: 'generate'` lets the runtime create a Secret with the given keys
 * (values from `generate`, never printed, never written into dist/).
 */
export interface Requirement {
  readonly kind: 'Secret' | 'ConfigMap';
  readonly name: string;
  readonly namespace: string;
  /** Keys the object must carry. */
  readonly keys: readonly string[];
  readonly ifMissing: 'fail' | 'generate';
  /** For `generate`: how each key's value is made. */
  readonly generate?: Readonly<Record<string, GeneratedValue>>;
  /** For `generate`: the created Secret's type (`kubernetes.io/basic-auth` for credentials). @default Opaque */
  readonly secretType?: string;
  /** What to tell the user when it is missing (e.g. the kubectl command that creates it). */
  readonly message?: string;
  /**
   * For `fail`: an earlier step of the same plan whose Job makes it (the migration's
   * import-secrets makes the database credentials). Before its first write, a run that runs that
   * step does not count it as missing; the step's own preflight still checks it.
   */
  readonly madeBy?: string;
}

/** A generated Secret value: a fixed, non-secret literal (a user name) or random characters. */
export type GeneratedValue =
  | { readonly literal: string }
  | { readonly random: { readonly length: number } };

/**
 * Imperative operations run before a step's objects are applied, for what server-side
 * apply cannot express.
 */
export type Action =
  | { readonly type: 'scale'; readonly object: ObjectRef; readonly replicas: number }
  | { readonly type: 'delete'; readonly object: ObjectRef };

/** A fact value printed by a facts-producing Job, or a literal. */
export type Operand = { readonly fact: string } | { readonly value: string };

/**
 * A precondition evaluated by the runtime from the facts gathered so far.
 * Versions compare numerically, part by part (`9` < `16`, `5.1.0 Alpha1` parses as 5.1.0).
 */
export type Gate =
  | {
    readonly type: 'compare-versions';
    readonly left: Operand;
    readonly op: '<' | '<=' | '==' | '!=' | '>=' | '>';
    readonly right: Operand;
    /** Shown when the gate refuses. */
    readonly message: string;
  }
  | {
    readonly type: 'equals' | 'not-equals';
    readonly left: Operand;
    readonly right: Operand;
    readonly message: string;
  }
  | {
    /** The fact exists and is not empty. */
    readonly type: 'present';
    readonly fact: string;
    readonly message: string;
  };

/**
 * An image a step's Deployments run that is decided at run time, from a fact a Job of an earlier
 * step printed: a restore runs the images its backup recorded, by digest (docs/backup.md).
 */
export interface ImageFromFact {
  /** The image as synthesized: every container and init container of the step's Deployments that names it. */
  readonly image: string;
  /** The fact whose value replaces it. Missing or empty: the step fails before it applies anything. */
  readonly fact: string;
}

export interface Step {
  /** Unique within the plan; also the chart name and the `uyuni-cdk.io/step` label value. */
  readonly name: string;
  /** The step's manifest file, relative to the plan directory (`0003-tls.k8s.yaml`). */
  readonly file: string;
  readonly description: string;
  /** Every object the file holds, in file order. */
  readonly objects: readonly ObjectRef[];
  /** What to wait for after applying, per object. */
  readonly waits: readonly Wait[];
  /** The step fails when its waits are not done within this time. */
  readonly timeoutSeconds: number;
  /** Checked (and, for `generate`, satisfied) before anything of the step is applied. */
  readonly requires: readonly Requirement[];
  /** Run before applying, in order. */
  readonly actions: readonly Action[];
  /** Evaluated before the step runs; any refusal stops the run (exit 1) before anything is applied. */
  readonly gates: readonly Gate[];
  /**
   * A Job of this step prints `key=value` lines that the runtime keeps as facts for later gates
   * (and shows in `status`).
   */
  readonly factsFrom?: ObjectRef;
  /**
   * What synth wrote into the step file, for `status` to read instead of parsing the file: its
   * digest and its Jobs' spec hashes. Absent in hand-written plans (status then parses the file).
   */
  readonly fileSummary?: StepFileSummary;
  /**
   * A one-shot data step of a flow (stop the old host and copy its data, import its secrets,
   * upgrade the database, finalize it): once the runtime recorded it done for this flow, it
   * never runs again (docs/runtime.md, "Safety"). @default a step that converges on every run
   */
  readonly oneShot?: Flow;
  /**
   * What data the step's Jobs delete or overwrite on every run (plan db-basebackup's older base
   * backups and WAL): `plan` lists it and `run` asks before the step, as for a data step.
   * @default a step that deletes no data
   */
  readonly destroysData?: string;
  /**
   * Images of the step's Deployments replaced by facts before they are applied (a restore's
   * recorded images). A runtime that does not know this field applies the images as synthesized.
   * @default none
   */
  readonly imagesFromFacts?: readonly ImageFromFact[];
}

/**
 * A step file as synth wrote it. Valid only while the file's text still has `sha256`: `status`
 * reads the file (from the plan directory, with the checks of every read) and uses the summary
 * when the digests are equal, else parses and checks the file as `run` does.
 */
export interface StepFileSummary {
  /** `sha256:` and the hex digest of the file's text (src/plan/spec-hash.ts `hashText`). */
  readonly sha256: string;
  /** Each Job of the step, by name: its spec hash (its `uyuni-cdk.io/spec-hash` annotation, else the hash of its spec). */
  readonly jobSpecHashes: Readonly<Record<string, string>>;
}

/** The flows whose data steps run once: a migration into a namespace, an upgrade to one image generation. */
export type Flow = 'migration' | 'upgrade';

/** What a plan brings about: the flow it finishes when its last step is done. */
export interface PlanFlow {
  readonly kind: Flow;
  /** A migration: the old server's host. */
  readonly source?: string;
}

/**
 * Who the server is: recorded at the end of a run of a plan that carries it, checked before
 * the first write of the next (a changed fqdn, an older image generation, a new CA are refused).
 */
export interface ServerIdentity {
  readonly fqdn: string;
  /** The server image without its tag: `registry.opensuse.org/uyuni/server`. */
  readonly product: string;
  /** The server image's tag: `2026.08`. */
  readonly imageGeneration: string;
  /** generated | third-party | migrated (config `tls.mode`). */
  readonly tlsMode: string;
  /**
   * The Secret whose certificate (ca.crt, else tls.crt) is the server's CA, recorded as its
   * fingerprint: a CA rotation's phase 2 names the new CA's. @default uyuni-ca
   */
  readonly caSecret?: string;
}

/**
 * A CA rotation in two phases (uyuni-tools c46f1238, `mgradm ssl addca` and `mgradm ssl rotate`;
 * docs/ca-rotation.md). The runtime records phase 1 with the server's identity, refuses phase 2
 * without it (unless forced or an emergency), checks the objects that must trust the new CA, and
 * asks before phase 2 as before any destructive change.
 */
export interface CaRotation {
  /** addca: the new CA joins what clients trust; rotate: the server switches to it, the old one is dropped. */
  readonly phase: 'addca' | 'rotate';
  /** The Secret with the new CA's certificate (ca.crt, else tls.crt). */
  readonly caSecret: string;
  /** rotate: both phases at once, no overlap (every client breaks until it has the new CA). @default false */
  readonly emergency?: boolean;
  /** rotate: go on without a recorded phase 1 and although an object below does not trust the new CA. @default false */
  readonly force?: boolean;
  /**
   * rotate: what must hold the new CA before the switch, as far as the server can tell (the
   * proxies' CA ConfigMaps, third-party Secrets): each read, its PEM certificates compared by
   * fingerprint. A missing object counts as not trusting. @default none
   */
  readonly trustedBy?: ReadonlyArray<{ readonly kind: 'ConfigMap' | 'Secret'; readonly name: string; readonly namespace: string; readonly key: string; readonly what: string }>;
}

/**
 * What the admin needs once a plan's server is up (as Helm's NOTES.txt), shown by the runtime at
 * the end of a successful run: derived from the configuration by synth, never by the runtime.
 */
export interface PlanNotes {
  /** The web UI: `https://<fqdn>/`. */
  readonly url: string;
  /** The first administrator's login (a new server's): the Secret and its keys. */
  readonly admin?: { readonly secret: string; readonly usernameKey: string; readonly passwordKey: string };
  /** A migrated server keeps the users of the server it came from: which. */
  readonly adminFrom?: string;
  /** Which DNS name to point where. */
  readonly dns: ReadonlyArray<{ readonly name: string; readonly pointTo: string }>;
  /** The ports clients and proxies must reach, and where they arrive. */
  readonly ports: ReadonlyArray<{ readonly port: number; readonly protocol: 'TCP' | 'UDP'; readonly what: string; readonly via: string }>;
}

export interface Plan {
  readonly formatVersion: typeof PLAN_FORMAT_VERSION;
  /** install | migrate | upgrade | proxy | node-services */
  readonly name: string;
  readonly description: string;
  /** The tool that wrote it, e.g. `uyuni-cdk 0.1.0`. */
  readonly generator: string;
  /** The namespace the plan's namespaced objects live in. */
  readonly namespace: string;
  /** Labels every object of the plan carries: `destroy` and `status` select by them. */
  readonly selector: Readonly<Record<string, string>>;
  /** Upper bound for the whole run; each step also has its own timeout. */
  readonly deadlineSeconds: number;
  readonly steps: readonly Step[];
  /** The flow this plan finishes (migrate: a migration, upgrade: an upgrade). @default none */
  readonly flow?: PlanFlow;
  /** The server this plan makes (install, migrate, upgrade). @default none (a proxy, the node services) */
  readonly identity?: ServerIdentity;
  /** Shown after a successful run (install, migrate). @default none */
  readonly notes?: PlanNotes;
  /** A phase of a CA rotation (ssl-addca, ssl-rotate). @default none */
  readonly caRotation?: CaRotation;
}
