import { Testing } from 'cdk8s';
import { UyuniNamespace, UyuniNamespaceProps } from '../../src/constructs/namespace';
import { K8sObject, validateObject } from '../helpers/validate';

const synth = (props: Partial<UyuniNamespaceProps> = {}): K8sObject => {
  const chart = Testing.chart();
  new UyuniNamespace(chart, 'Namespace', { name: 'uyuni', ...props });
  const objects: K8sObject[] = Testing.synth(chart);
  objects.forEach(validateObject);
  expect(objects).toHaveLength(1);
  return objects[0];
};

describe('UyuniNamespace', () => {
  it('matches the snapshot of the default props', () => {
    const chart = Testing.chart();
    new UyuniNamespace(chart, 'Namespace', { name: 'uyuni' });
    expect(Testing.synth(chart)).toMatchSnapshot();
  });

  it('is the cluster-scoped Namespace of that name, labelled part-of uyuni, component server by default', () => {
    const ns = synth({ name: 'mlm' });
    expect([ns.apiVersion, ns.kind]).toEqual(['v1', 'Namespace']);
    expect(ns.metadata).toEqual({
      name: 'mlm',
      labels: { 'app.kubernetes.io/part-of': 'uyuni', 'app.kubernetes.io/component': 'server', 'app.kubernetes.io/managed-by': 'uyuni-cdk' },
    });
  });

  it('labels the product and component given', () => {
    expect(synth({ partOf: 'uyuni-proxy', component: 'proxy' }).metadata.labels).toEqual({
      'app.kubernetes.io/part-of': 'uyuni-proxy', 'app.kubernetes.io/component': 'proxy', 'app.kubernetes.io/managed-by': 'uyuni-cdk',
    });
  });

  it('exposes its name', () => {
    const chart = Testing.chart();
    expect(new UyuniNamespace(chart, 'Namespace', { name: 'mlm' }).name).toBe('mlm');
  });
});
