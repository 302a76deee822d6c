import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { CREDENTIALS, credentialEnv } from '../model/credentials';
import { DATABASES, PG_PORT } from '../model/db';
import type { ImageRef } from '../model/images';
import { componentDeployment } from './component-deployment';

export interface CocoDeploymentProps {
  readonly namespace: string;
  /** The server-attestation image. */
  readonly image: ImageRef;
  readonly replicas: number;
  readonly timezone: string;
}

/** Deployment `uyuni-coco-attestation` (component coco): confidential-computing attestation, on the product database. */
export class CocoDeployment extends Construct {
  public static readonly NAME = 'uyuni-coco-attestation';
  public readonly deployment: k8s.KubeDeployment;

  constructor(scope: Construct, id: string, props: CocoDeploymentProps) {
    super(scope, id);
    const db = DATABASES.product;
    const [user, pass] = credentialEnv(CREDENTIALS.db);
    this.deployment = componentDeployment(this, 'Resource', {
      name: CocoDeployment.NAME,
      namespace: props.namespace,
      partOf: 'uyuni',
      component: 'coco',
      replicas: props.replicas,
      pod: {
        imagePullSecrets: props.image.pullSecrets ? [...props.image.pullSecrets] : undefined,
        containers: [{
          name: 'coco',
          image: props.image.image,
          imagePullPolicy: props.image.pullPolicy,
          env: [
            { name: 'database_connection', value: `jdbc:postgresql://${db.host}:${PG_PORT}/${db.name}` },
            { ...user, name: 'database_user' },
            { ...pass, name: 'database_password' },
            { name: 'TZ', value: props.timezone },
          ],
          securityContext: { allowPrivilegeEscalation: false },
        }],
      },
    });
  }
}
