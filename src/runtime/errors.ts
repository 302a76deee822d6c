/**
 * Errors that end a run, each with the exit code the CLI returns for it
 * (0 done, 1 step failed, 2 bad input/config, 3 cluster unreachable).
 */
export class RuntimeError extends Error {
  constructor(message: string, readonly exitCode: 1 | 2 | 3) {
    super(message);
  }
}

/** A step failed, was refused (gate, requirement, changed Job) or timed out: exit 1. */
export class StepFailed extends RuntimeError {
  constructor(readonly step: string, message: string) {
    super(message, 1);
  }
}

/** Bad plan directory, kubeconfig, context or arguments: exit 2. */
export class BadInput extends RuntimeError {
  constructor(message: string) {
    super(message, 2);
  }
}

/** Connection refused, DNS or TLS failure before any step ran: exit 3. */
export class Unreachable extends RuntimeError {
  constructor(message: string) {
    super(message, 3);
  }
}
