import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { DATABASES, PG_PORT } from '../model/db';
import { commonLabels } from '../model/labels';

/** The ConfigMap's name and keys, as the chart's pods read them (docs/upstream.md). */
export const UYUNI_CONFIG = {
  name: 'uyuni-config',
  keys: {
    fqdn: 'fqdn',
    email: 'email',
    dbHost: 'db_host',
    dbPort: 'db_port',
    dbName: 'db_name',
    reportdbHost: 'reportdb_host',
    reportdbPort: 'reportdb_port',
    reportdbName: 'reportdb_name',
  },
} as const;

export interface UyuniConfigMapProps {
  readonly namespace: string;
  /** The server's public name (UYUNI_HOSTNAME). */
  readonly fqdn: string;
  /** The administrator's and the mail sender's address. */
  readonly email: string;
}

/** ConfigMap `uyuni-config`: the server's name, mail address and database endpoints. */
export class UyuniConfigMap extends Construct {
  public readonly configMap: k8s.KubeConfigMap;

  constructor(scope: Construct, id: string, props: UyuniConfigMapProps) {
    super(scope, id);
    const k = UYUNI_CONFIG.keys;
    this.configMap = new k8s.KubeConfigMap(this, 'Resource', {
      metadata: { name: UYUNI_CONFIG.name, namespace: props.namespace, labels: commonLabels('uyuni', 'server') },
      data: {
        [k.fqdn]: props.fqdn,
        [k.email]: props.email,
        [k.dbHost]: DATABASES.product.host,
        [k.dbPort]: String(PG_PORT),
        [k.dbName]: DATABASES.product.name,
        [k.reportdbHost]: DATABASES.report.host,
        [k.reportdbPort]: String(PG_PORT),
        [k.reportdbName]: DATABASES.report.name,
      },
    });
  }
}

/** An env var from one key of ConfigMap uyuni-config. */
export function configEnv(name: string, key: string): k8s.EnvVar {
  return { name, valueFrom: { configMapKeyRef: { name: UYUNI_CONFIG.name, key } } };
}
