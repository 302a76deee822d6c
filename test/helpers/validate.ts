/**
 * Validates synthesized objects against the pinned schemas: Kubernetes 1.28 through
 * kubernetes-models@4.5.1 and cert-manager through @kubernetes-models/cert-manager@4.4.4
 * (types, enums, required fields). A kind without a model is an error, not a pass.
 */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [key: string]: any;
}

function modelPath(apiVersion: string, kind: string): string {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  if (group === 'cert-manager.io') return `@kubernetes-models/cert-manager/cert-manager.io/${version}/${kind}`;
  return group ? `kubernetes-models/${group}/${version}/${kind}` : `kubernetes-models/${version}/${kind}`;
}

/** Throws with the object's identity and the schema's complaint when it is invalid. */
export function validateObject(obj: K8sObject): void {
  const where = `${obj.apiVersion} ${obj.kind} ${obj.metadata?.namespace ?? ''}/${obj.metadata?.name}`;
  let Model: any;
  try {
    Model = require(modelPath(obj.apiVersion, obj.kind))[obj.kind];
  } catch {
    throw new Error(`${where}: no schema model for this kind`);
  }
  try {
    new Model(obj).validate();
  } catch (e) {
    throw new Error(`${where}: ${(e as Error).message}`);
  }
}
