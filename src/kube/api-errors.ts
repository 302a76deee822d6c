/**
 * Errors that end a run, each with the exit code the CLI returns for it (src/plan/exit-codes.ts),
 * and the API's own answers.
 */
import { STATUS_CODES } from 'http';
import { EXIT } from '../plan/exit-codes';
import { ApiError, CodedError as RuntimeError, FailureExitCode } from './errors';

export type { FailureExitCode } from './errors';

/**
 * The base of every expected error: the message is reported without a stack trace and the
 * exit code returned. One class with the Kubernetes layer's errors (src/kube/errors.ts), so an
 * ApiError is one too.
 */
export { RuntimeError };

/**
 * An API answer that is not a success (src/kube/errors.ts: one ApiError for the runtime and the
 * agent). Callers that expect one (404 on a read, 422 on a dry run) look at `status`; one that
 * reaches a verb's end is reported with its message and exit code (src/kube/retry.ts words
 * and codes it).
 */
export { ApiError };

/**
 * The API server stopped answering while a step waited (src/runtime/apply/waiter.ts apiSilence): exit
 * 3, as an unreachable cluster; what the step's Jobs did is unknown, so the next command attaches
 * to them (no `--rerun`).
 */
export class ApiSilent extends RuntimeError {
  constructor(readonly step: string, message: string) {
    super(message, EXIT.unreachable);
  }
}

/** Bad plan directory, kubeconfig, context or arguments: exit 2. */
export class BadInput extends RuntimeError {
  constructor(message: string) {
    super(message, EXIT.badInput);
  }
}

/** Connection refused, DNS, TLS failure, no answer: exit 3 before any step ran, exit 1 in a step. */
export class Unreachable extends RuntimeError {
  constructor(message: string, inStep = false) {
    super(message, inStep ? EXIT.stepFailed : EXIT.unreachable);
  }
}

/**
 * The API groups Kubernetes itself serves (kube-apiserver and its aggregated APIs): a kind of
 * these is missing because of the server (its version, a disabled API), never for want of a CRD.
 */
const BUILTIN_GROUPS: ReadonlySet<string> = new Set([
  '', 'apps', 'batch', 'autoscaling', 'policy', 'admissionregistration.k8s.io', 'apiextensions.k8s.io', 'apiregistration.k8s.io',
  'authentication.k8s.io', 'authorization.k8s.io', 'certificates.k8s.io', 'coordination.k8s.io', 'discovery.k8s.io',
  'events.k8s.io', 'flowcontrol.apiserver.k8s.io', 'internal.apiserver.k8s.io', 'metrics.k8s.io', 'networking.k8s.io', 'node.k8s.io',
  'rbac.authorization.k8s.io', 'resource.k8s.io', 'scheduling.k8s.io', 'storage.k8s.io', 'storagemigration.k8s.io',
]);

/**
 * The resource (plural) of a kind when discovery cannot say: apimachinery's
 * UnsafeGuessKindToResource, what kubectl guesses (StorageClass → storageclasses, Policy → policies).
 */
export function guessResource(kind: string): string {
  const k = kind.toLowerCase();
  if (k.endsWith('s')) return `${k}es`;
  if (k.endsWith('y')) return `${k.slice(0, -1)}ies`;
  return `${k}s`;
}

function missingKindMessage(apiVersion: string, kind: string, served: readonly string[] | undefined): string {
  const group = apiVersion.includes('/') ? apiVersion.split('/')[0] : '';
  const listed = served ? `${apiVersion} serves ${served.length ? served.join(', ') : 'nothing'}` : `no API ${apiVersion}`;
  const what = `${apiVersion} ${kind} is not served by this cluster (${listed})`;
  if (BUILTIN_GROUPS.has(group)) {
    return `${what}: ${kind} is built into Kubernetes, so this API server is of a version without it or has that API turned off`;
  }
  const crd = `${guessResource(kind)}.${group}`;
  return `${what}: the CustomResourceDefinition ${crd} is missing${served ? ' or does not serve that version' : ''}${group === 'cert-manager.io' ? ' (install cert-manager first)' : ''}`;
}

/**
 * A kind the cluster does not serve. `served`: the resources discovery lists for that
 * group/version when it answered (the kind is not among them); absent when the group/version
 * itself is not served.
 */
export class MissingKind extends RuntimeError {
  constructor(readonly apiVersion: string, readonly kind: string, served?: readonly string[]) {
    super(missingKindMessage(apiVersion, kind, served), EXIT.stepFailed);
  }
}

/**
 * The API answered wrongly (cut short, not JSON, too large, too slow, a Retry-After beyond the
 * deadline), after retries: exit 3 before any step ran, exit 1 in a step.
 */
export class ClusterMisbehaved extends RuntimeError {
  constructor(message: string, inStep: boolean) {
    super(message, inStep ? EXIT.stepFailed : EXIT.unreachable);
  }
}

/** Where the requests go and as whom (from the kubeconfig): what a message tells the user to check. */
export interface Endpoint {
  readonly server: string;
  readonly cluster: string;
  readonly user: string;
  readonly context: string;
}

const TLS_UNTRUSTED = new Set(['DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'CERT_SIGNATURE_FAILURE', 'CERT_UNTRUSTED']);

function hostOf(server: string): string {
  try {
    return new URL(server).hostname;
  } catch {
    return server;
  }
}

/**
 * A request that got no answer, in the user's words: the system error code, what it means and
 * what to check (`cannot reach the cluster at https://…: ECONNREFUSED (connection refused); check …`).
 */
export function connectionFailure(code: string, detail: string, at: Endpoint): string {
  const host = hostOf(at.server);
  const cluster = `cluster "${at.cluster}" of the kubeconfig`;
  const [says, check] = ((): [string, string] => {
    if (code === 'ECONNREFUSED') return ['connection refused', `check that the API server runs and that ${at.server}, the server of ${cluster}, is its address and port`];
    if (code === 'ENOTFOUND') return [`the host name ${host} does not resolve`, `check the server of ${cluster} and this machine's DNS`];
    if (code === 'EAI_AGAIN') return [`the DNS lookup of ${host} failed`, 'check the DNS servers this machine uses, then try again'];
    if (code === 'ETIMEDOUT' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return [`no route to ${host}`, `check the network path to ${at.server} (VPN, firewall, proxy)`];
    if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET') return ['the connection was closed during the request', 'check a proxy or load balancer in front of the API server, and the API server\'s health'];
    if (code === 'CERT_HAS_EXPIRED') return ['the API server\'s TLS certificate has expired', 'renew it, or check this machine\'s clock'];
    if (code === 'CERT_NOT_YET_VALID') return ['the API server\'s TLS certificate is not valid yet', 'check this machine\'s clock'];
    if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return [`the API server's TLS certificate does not name ${host} (${detail})`, `use an address the certificate names, or set tls-server-name of ${cluster}`];
    if (TLS_UNTRUSTED.has(code)) return [`the API server's TLS certificate is not signed by a CA this kubeconfig trusts (${detail})`, `set certificate-authority-data of ${cluster} to the cluster's CA`];
    if (code === 'EPROTO' || code.startsWith('ERR_SSL') || code.startsWith('ERR_TLS')) return [`the TLS handshake failed (${detail})`, `check that ${at.server} speaks HTTPS on that port, and the client certificate of user "${at.user}"`];
    return [detail, `check the server of ${cluster}`];
  })();
  return `cannot reach the cluster at ${at.server}: ${code} (${says}); ${check}`;
}

/**
 * A 403 or 500 that is not about the user's permissions, by the API server's own wording: a
 * terminating namespace, an exceeded ResourceQuota, PodSecurity, an admission webhook that
 * denied the request or could not be called. Undefined: none of these (RBAC, a failing server).
 */
export function admissionCause(message: string): string | undefined {
  const ns = /unable to create new content in namespace (\S+) because it is being terminated/.exec(message);
  if (ns) return `namespace ${ns[1]} is being deleted (Terminating): wait until it is gone (kubectl get namespace ${ns[1]}), or find what holds it (its remaining objects' finalizers), then run again`;
  const quota = /exceeded quota: ([^,]+)/.exec(message);
  if (quota) return `the ResourceQuota ${quota[1]} of that namespace has no room left: raise it or free room (kubectl describe resourcequota ${quota[1]})`;
  const pss = /violates PodSecurity "([^"]+)"/.exec(message);
  if (pss) return `the namespace's PodSecurity level ${pss[1]} (label pod-security.kubernetes.io/enforce) refuses it: label the namespace with a level the pod meets, or change the pod`;
  const denied = /admission webhook "([^"]+)" denied the request/.exec(message);
  if (denied) return `the admission webhook ${denied[1]} refused it (a cluster policy): change the configuration to meet the policy, or ask the cluster's admins`;
  const failing = /failed calling webhook "([^"]+)"/.exec(message);
  if (failing) return `the admission webhook ${failing[1]} could not be called: check its service and pods (kubectl get validatingwebhookconfigurations,mutatingwebhookconfigurations names it), then try again`;
  return undefined;
}

/**
 * What an API refusal that no caller expects means (`what` names the request), with the exit
 * code: credentials (401) and permissions (403) are the kubeconfig's user, so bad input (2) before
 * any step; a failing or throttling API server (5xx, 429, after retries) is unreachable (3);
 * anything else, and everything once a step ran, fails (1). Undefined: an answer callers handle
 * themselves (404 on a read, 409, 422, ...), worded by them.
 */
export function refusal(what: string, api: { status: number; reason: string; message: string }, at: Endpoint, attempts: number, inStep: boolean): { message: string; exitCode: FailureExitCode } | undefined {
  const as = `user "${at.user}" (context "${at.context}")`;
  const reason = api.reason || STATUS_CODES[api.status];
  const http = `HTTP ${api.status}${reason ? ` ${reason}` : ''}`;
  const code = (before: FailureExitCode) => (inStep ? EXIT.stepFailed : before);
  if (api.status === 401) {
    return {
      message: `${what}: ${http}: the cluster at ${at.server} does not accept the credentials of ${as}; check its token, client certificate or exec plugin in the kubeconfig (expired?), e.g. kubectl --context ${at.context} auth whoami`,
      exitCode: code(EXIT.badInput),
    };
  }
  const cause = api.status === 403 || api.status >= 500 ? admissionCause(api.message) : undefined;
  if (cause) return { message: `${what}: ${http}: ${api.message}; ${cause}`, exitCode: code(api.status === 403 ? EXIT.badInput : EXIT.unreachable) };
  if (api.status === 403) {
    return {
      message: `${what}: ${http}: ${api.message}; ${as} needs that permission (RBAC): kubectl --context ${at.context} auth can-i --list shows what it may do`,
      exitCode: code(EXIT.badInput),
    };
  }
  if (api.status >= 500 || api.status === 429) {
    const failing = api.status === 429 ? 'throttles these requests' : 'is failing';
    return {
      message: `${what}: ${http}: ${api.message} (${attempts} attempts); the API server at ${at.server} ${failing}: check its health (kubectl --context ${at.context} get --raw /readyz), then try again`,
      exitCode: code(EXIT.unreachable),
    };
  }
  return undefined;
}
