import { Testing } from 'cdk8s';
import { configEnv, UYUNI_CONFIG, UyuniConfigMap, UyuniConfigMapProps } from '../../src/constructs/uyuni-config-map';
import { K8sObject, validateObject } from '../helpers/validate';

const MINIMAL: UyuniConfigMapProps = { namespace: 'uyuni', fqdn: 'uyuni.example.com', email: 'admin@example.com' };

const synth = (props: Partial<UyuniConfigMapProps> = {}): K8sObject => {
  const chart = Testing.chart();
  new UyuniConfigMap(chart, 'Config', { ...MINIMAL, ...props });
  const objects: K8sObject[] = Testing.synth(chart);
  objects.forEach(validateObject);
  expect(objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(['ConfigMap/uyuni-config']);
  return objects[0];
};

describe('UyuniConfigMap', () => {
  it('matches the snapshot of the default props', () => {
    const chart = Testing.chart();
    new UyuniConfigMap(chart, 'Config', MINIMAL);
    expect(Testing.synth(chart)).toMatchSnapshot();
  });

  it('holds the chart\'s keys: the FQDN, the mail address and both database endpoints', () => {
    expect(synth({ fqdn: 'mlm.example.org', email: 'ops@example.org' }).data).toEqual({
      fqdn: 'mlm.example.org',
      email: 'ops@example.org',
      db_host: 'db',
      db_port: '5432',
      db_name: 'susemanager',
      reportdb_host: 'reportdb',
      reportdb_port: '5432',
      reportdb_name: 'reportdb',
    });
  });

  it('lives in the namespace given, labelled part-of uyuni', () => {
    const cm = synth({ namespace: 'mlm' });
    expect(cm.metadata.namespace).toBe('mlm');
    expect(cm.metadata.labels).toEqual({
      'app.kubernetes.io/part-of': 'uyuni', 'app.kubernetes.io/component': 'server', 'app.kubernetes.io/managed-by': 'uyuni-cdk',
    });
  });

  it('names every key the pods read', () => {
    expect(Object.keys(synth().data).sort()).toEqual(Object.values(UYUNI_CONFIG.keys).sort());
  });

  it('reads one key into an env var (configEnv)', () => {
    expect(configEnv('UYUNI_HOSTNAME', UYUNI_CONFIG.keys.fqdn)).toEqual({
      name: 'UYUNI_HOSTNAME', valueFrom: { configMapKeyRef: { name: 'uyuni-config', key: 'fqdn' } },
    });
  });
});
