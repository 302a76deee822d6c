/**
 * What the cluster shows of a server when its records are gone (no ConfigMap uyuni-cdk-history
 * entry and no copy on the namespace: src/runtime/safety/record-store.ts): a server Deployment made by
 * uyuni-cdk and the image it runs, the fqdn in ConfigMap uyuni-config, the CA in Secret uyuni-ca.
 * Any of the first two means a server was set up here; the runtime then refuses a migration's
 * data steps and an identity change exactly as a record would (src/runtime/safety/record.ts
 * `withEvidence`). Bound claims alone are not evidence: a migration interrupted during its data
 * sync has them, and its data sync must go on; the setup marker on them
 * (/var/spacewalk/.MANAGER_SETUP_COMPLETE) is read only by a pod (the inspect step), never by
 * the runtime.
 */
import type { V1ConfigMap, V1Deployment } from '@kubernetes/client-node';
import { LABELS, MANAGED_BY, Plan } from '../../plan/types';
import type { Cluster } from '../../kube/cluster';
import { caFingerprint, CA_SECRET, RecordedIdentity, Records } from './record';

/** The ConfigMap the server's configuration lives in (src/constructs/uyuni-config-map.ts). */
export const CONFIG_MAP = 'uyuni-config';

export interface ClusterEvidence {
  /** The server Deployment and its image, split at the tag. */
  readonly server?: { readonly name: string; readonly image: string; readonly product: string; readonly tag?: string; readonly replicas: number };
  /** `fqdn` of ConfigMap uyuni-config. */
  readonly fqdn?: string;
  /** The fingerprint of the CA in Secret uyuni-ca. */
  readonly ca?: string;
  /** What was found, in words (empty: nothing: no server was set up here). */
  readonly found: readonly string[];
}

/** `registry/x/server:2026.09` → product and tag (a digest is dropped; no tag: undefined). */
export function splitImage(image: string): { product: string; tag?: string } {
  const noDigest = image.split('@')[0];
  const colon = noDigest.lastIndexOf(':');
  return colon > noDigest.lastIndexOf('/') ? { product: noDigest.slice(0, colon), tag: noDigest.slice(colon + 1) } : { product: noDigest };
}

/** Reads the evidence (three reads, together). */
export async function clusterEvidence(cluster: Cluster, namespace: string): Promise<ClusterEvidence> {
  const [deployments, config, ca] = await Promise.all([
    cluster.list<V1Deployment>({ apiVersion: 'apps/v1', kind: 'Deployment', namespace, labelSelector: `${LABELS.component}=server,${LABELS.managedBy}=${MANAGED_BY}` }),
    cluster.get<V1ConfigMap>({ apiVersion: 'v1', kind: 'ConfigMap', name: CONFIG_MAP, namespace }),
    caFingerprint(cluster, namespace),
  ]);
  const found: string[] = [];
  const d = deployments.items.find((x) => x.spec?.template?.spec?.containers?.[0]?.image);
  let server: ClusterEvidence['server'];
  if (d) {
    const image = d.spec!.template.spec!.containers[0].image!;
    server = { name: d.metadata!.name!, image, ...splitImage(image), replicas: d.spec?.replicas ?? 1 };
    found.push(`Deployment ${namespace}/${server.name} runs ${image} (${server.replicas} replica${server.replicas === 1 ? '' : 's'})`);
  }
  const fqdn = config?.data?.fqdn || undefined;
  if (config) found.push(`ConfigMap ${namespace}/${CONFIG_MAP} ${fqdn ? `names fqdn ${fqdn}` : 'exists'}`);
  if (ca && found.length) found.push(`Secret ${namespace}/${CA_SECRET} holds CA ${ca.slice(0, 23)}…`);
  return { ...(server ? { server } : {}), ...(fqdn ? { fqdn } : {}), ...(ca ? { ca } : {}), found };
}

/** `the cluster shows a set-up server (…) but no record of it`: the words of a refusal from evidence. */
export function evidenceText(e: ClusterEvidence, namespace: string): string {
  return `no record of this server is left (ConfigMap ${namespace}/uyuni-cdk-history and its copy on namespace ${namespace} hold none), `
    + `but the cluster shows a set-up server: ${e.found.join('; ')}`;
}

/**
 * The records with the cluster's evidence in place of the guarded records that are gone (not
 * damaged: those refuse on their own): a migration plan's flow, when no migration record is left
 * and a server is set up here, is taken as finished (its data steps refuse; `--rerun STEP` runs
 * one, asked first); the identity, when none is recorded, is the live one (the server
 * Deployment's image, uyuni-config's fqdn, uyuni-ca's CA). The cluster is read only when a
 * record the plan needs is gone.
 */
export async function withEvidence(cluster: Cluster, plan: Plan, records: Records): Promise<Records> {
  const damaged = new Set((records.damage ?? []).map((d) => d.key));
  const migration = plan.steps.some((s) => s.oneShot === 'migration') && !records.flows.migration && !damaged.has('flow.migration');
  const identity = plan.identity !== undefined && !records.identity && !damaged.has('identity');
  if (!migration && !identity) return records;
  const e = await clusterEvidence(cluster, plan.namespace);
  if (!e.server && !e.fqdn) return records;
  const words = evidenceText(e, plan.namespace);
  const at = new Date().toISOString();
  const flows = migration
    ? { ...records.flows, migration: { flow: 'migration' as const, plan: '(none recorded)', run: '(none recorded)', finishedAt: '(unknown)', steps: {}, evidence: words } }
    : records.flows;
  const planned = plan.identity!;
  const live: RecordedIdentity | undefined = identity ? {
    fqdn: e.fqdn ?? planned.fqdn,
    product: e.server?.product ?? planned.product,
    imageGeneration: e.server?.tag ?? planned.imageGeneration,
    tlsMode: planned.tlsMode,
    ...(e.ca ? { caFingerprint: e.ca } : {}),
    plan: '(none recorded)', run: '(none recorded)', at,
    source: `as the cluster runs it now: ${e.found.join('; ')}; no record of it is left`,
  } : undefined;
  return { ...records, flows, ...(live ? { identity: live } : {}) };
}
