import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import type { UyuniConfig } from '../config/schema';
import { CREDENTIALS, credentialEnv } from '../model/credentials';
import { image, IMAGES, pullSecrets } from '../model/images';
import { containerPorts } from '../model/ports';
import { DB_DATA_PATH } from '../model/volumes';
import { serverServicesOf } from './server-pod';
import { componentDeployment } from './component-deployment';

export interface DbDeploymentProps {
  readonly namespace: string;
  readonly config: UyuniConfig;
}

/** The PostgreSQL user and group of the server-postgresql image. */
const POSTGRES_UID = 999;

/**
 * Deployment `db` (component db): PostgreSQL apart from the server, Recreate, `var-pgsql` at
 * /var/lib/pgsql/data, TLS from Secret `db-cert`, credentials from Secrets.
 */
export class DbDeployment extends Construct {
  public static readonly NAME = 'db';
  public readonly deployment: k8s.KubeDeployment;

  constructor(scope: Construct, id: string, props: DbDeploymentProps) {
    super(scope, id);
    const { config } = props;
    this.deployment = componentDeployment(this, 'Resource', {
      name: DbDeployment.NAME,
      namespace: props.namespace,
      partOf: 'uyuni',
      component: 'db',
      replicas: 1,
      recreate: true,
      pod: {
        securityContext: { fsGroup: POSTGRES_UID, runAsUser: POSTGRES_UID, runAsGroup: POSTGRES_UID, runAsNonRoot: true },
        imagePullSecrets: pullSecrets(config),
        containers: [{
          name: 'db',
          image: image(config, IMAGES.postgresql),
          imagePullPolicy: config.images.pullPolicy,
          ports: containerPorts(serverServicesOf(config), 'db'),
          env: [
            { name: 'TZ', value: config.timezone },
            ...credentialEnv(CREDENTIALS.dbAdmin),
            ...credentialEnv(CREDENTIALS.db),
            ...credentialEnv(CREDENTIALS.reportdb),
          ],
          volumeMounts: [
            { name: 'var-pgsql', mountPath: DB_DATA_PATH },
            { name: 'db-tls', mountPath: '/etc/pki/tls/db', readOnly: true },
          ],
          securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: false },
          readinessProbe: { exec: { command: ['pg_isready', '-h', 'localhost', '-p', '5432'] }, periodSeconds: 10, failureThreshold: 6 },
          livenessProbe: { exec: { command: ['pg_isready', '-h', 'localhost', '-p', '5432'] }, initialDelaySeconds: 60, periodSeconds: 30 },
        }],
        volumes: [
          { name: 'var-pgsql', persistentVolumeClaim: { claimName: 'var-pgsql' } },
          { name: 'db-tls', secret: { secretName: 'db-cert', defaultMode: 0o400 } },
        ],
      },
    });
  }
}
