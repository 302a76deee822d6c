/**
 * Errors that end a run, each with the exit code the CLI returns for it (src/plan/exit-codes.ts),
 * and the API's own answers.
 */
import { EXIT } from '../plan/exit-codes';

export type FailureExitCode = typeof EXIT.stepFailed | typeof EXIT.badInput | typeof EXIT.unreachable;

export class RuntimeError extends Error {
  constructor(message: string, readonly exitCode: FailureExitCode) {
    super(message);
  }
}

/** A step failed, was refused (gate, requirement, changed Job) or timed out: exit 1. */
export class StepFailed extends RuntimeError {
  constructor(readonly step: string, message: string) {
    super(message, EXIT.stepFailed);
  }
}

/** Bad plan directory, kubeconfig, context or arguments: exit 2. */
export class BadInput extends RuntimeError {
  constructor(message: string) {
    super(message, EXIT.badInput);
  }
}

/** Connection refused, DNS or TLS failure before any step ran: exit 3. */
export class Unreachable extends RuntimeError {
  constructor(message: string) {
    super(message, EXIT.unreachable);
  }
}

/** An API answer that is not a success, with the Status body's reason and message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    readonly causes: string[] = [],
    /** The answer's Retry-After, in seconds. */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

/** A kind the cluster does not serve: its CRD is not installed. */
export class MissingKind extends RuntimeError {
  constructor(readonly apiVersion: string, readonly kind: string) {
    const group = apiVersion.includes('/') ? apiVersion.split('/')[0] : '';
    const crd = group ? `${kind.toLowerCase()}s.${group}` : kind;
    super(`${apiVersion} ${kind} is not served by this cluster: the CustomResourceDefinition ${crd} is missing${group === 'cert-manager.io' ? ' (install cert-manager first)' : ''}`, EXIT.stepFailed);
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
