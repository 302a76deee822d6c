// Kubernetes `Status` failure bodies, worded as the API server words them.
import { ResourceType, qualifiedKind, qualifiedName } from './resources';

export interface Cause {
  reason: string;
  message: string;
  field?: string;
}

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: { name?: string; group?: string; kind?: string; causes?: Cause[]; retryAfterSeconds?: number },
  ) {
    super(message);
  }

  status(): any {
    return {
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: this.message, reason: this.reason,
      ...(this.details ? { details: this.details } : {}), code: this.code,
    };
  }
}

const detailsOf = (rt: ResourceType, name: string) => ({ name, group: rt.group || undefined, kind: rt.plural });

export const notFound = (rt: ResourceType, name: string) =>
  new ApiError(404, 'NotFound', `${qualifiedName(rt)} "${name}" not found`, detailsOf(rt, name));

export const noSuchResource = () => new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});

export const alreadyExists = (rt: ResourceType, name: string) =>
  new ApiError(409, 'AlreadyExists', `${qualifiedName(rt)} "${name}" already exists`, detailsOf(rt, name));

export const staleConflict = (rt: ResourceType, name: string) =>
  new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedName(rt)} "${name}": the object has been modified; please apply your changes to the latest version and try again`, detailsOf(rt, name));

export const badRequest = (message: string) => new ApiError(400, 'BadRequest', message);

/** 422 Invalid: `Job.batch "x" is invalid: spec.template: Invalid value: ...: field is immutable`. */
export function invalid(rt: ResourceType | { kind: string; group: string }, name: string, causes: Cause[]): ApiError {
  const kind = 'plural' in rt ? qualifiedKind(rt) : rt.group ? `${rt.kind}.${rt.group}` : rt.kind;
  const parts = causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message));
  const summary = parts.length === 1 ? parts[0] : `[${parts.join(', ')}]`;
  return new ApiError(422, 'Invalid', `${kind} "${name}" is invalid: ${summary}`, { name, group: rt.group || undefined, kind: rt.kind, causes });
}

export const immutable = (field: string, value: any): Cause => ({
  reason: 'FieldValueInvalid',
  field,
  message: `Invalid value: ${JSON.stringify(value)}: field is immutable`,
});
