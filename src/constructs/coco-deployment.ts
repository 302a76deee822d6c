import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import type { UyuniConfig } from '../config/schema';
import { CREDENTIALS, credentialEnv } from '../model/credentials';
import { image, IMAGES, pullSecrets } from '../model/images';
import { componentDeployment } from './component-deployment';

export interface CocoDeploymentProps {
  readonly namespace: string;
  readonly config: UyuniConfig;
  /** The database name. @default 'susemanager' */
  readonly dbName?: string;
}

/** Deployment `uyuni-coco-attestation` (component coco): confidential-computing attestation. */
export class CocoDeployment extends Construct {
  public static readonly NAME = 'uyuni-coco-attestation';
  public readonly deployment: k8s.KubeDeployment;

  constructor(scope: Construct, id: string, props: CocoDeploymentProps) {
    super(scope, id);
    const { config } = props;
    this.deployment = componentDeployment(this, 'Resource', {
      name: CocoDeployment.NAME,
      namespace: props.namespace,
      partOf: 'uyuni',
      component: 'coco',
      replicas: config.coco.replicas,
      pod: {
        imagePullSecrets: pullSecrets(config),
        containers: [{
          name: 'coco',
          image: image(config, IMAGES.coco),
          imagePullPolicy: config.images.pullPolicy,
          env: [
            { name: 'database_connection', value: `jdbc:postgresql://db:5432/${props.dbName ?? 'susemanager'}` },
            ...credentialEnv(CREDENTIALS.db).map((e) => ({ ...e, name: e.name === 'MANAGER_USER' ? 'database_user' : 'database_password' })),
            { name: 'TZ', value: config.timezone },
          ],
          securityContext: { allowPrivilegeEscalation: false },
        }],
      },
    });
  }
}
