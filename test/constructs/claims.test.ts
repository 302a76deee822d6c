import { Testing } from 'cdk8s';
import { ClaimProps, Claims, claimMounts, claimVolumes, ClaimsProps } from '../../src/constructs/claims';
import type { VolumeSpec } from '../../src/model/volumes';
import { K8sObject, validateObject } from '../helpers/validate';

const MINIMAL: ClaimProps = { name: 'var-log', size: '2Gi' };

const synth = (props: Partial<ClaimsProps> = {}): K8sObject[] => {
  const chart = Testing.chart();
  new Claims(chart, 'Claims', { namespace: 'uyuni', claims: [MINIMAL], ...props });
  const objects: K8sObject[] = Testing.synth(chart);
  objects.forEach(validateObject);
  return objects;
};
const only = (claim: Partial<ClaimProps>): K8sObject => {
  const objects = synth({ claims: [{ ...MINIMAL, ...claim }] });
  expect(objects).toHaveLength(1);
  return objects[0];
};

describe('Claims', () => {
  it('matches the snapshot of the default props', () => {
    const chart = Testing.chart();
    new Claims(chart, 'Claims', { namespace: 'uyuni', claims: [MINIMAL] });
    expect(Testing.synth(chart)).toMatchSnapshot();
  });

  it('writes one ReadWriteOnce claim per entry, in order, with its size', () => {
    const objects = synth({ claims: [{ name: 'a', size: '1Mi' }, { name: 'b', size: '10Gi' }, { name: 'c', size: '300Mi' }] });
    expect(objects.map((o) => `${o.apiVersion} ${o.kind} ${o.metadata.namespace}/${o.metadata.name}`)).toEqual([
      'v1 PersistentVolumeClaim uyuni/a', 'v1 PersistentVolumeClaim uyuni/b', 'v1 PersistentVolumeClaim uyuni/c',
    ]);
    expect(objects.map((o) => o.spec.resources.requests.storage)).toEqual(['1Mi', '10Gi', '300Mi']);
    for (const o of objects) expect(o.spec.accessModes).toEqual(['ReadWriteOnce']);
  });

  it('writes nothing without claims', () => {
    expect(synth({ claims: [] })).toEqual([]);
  });

  it('leaves out the storage class, volumeName, selector and annotations by default (the cluster\'s default class)', () => {
    const pvc = only({});
    expect(Object.keys(pvc.spec).sort()).toEqual(['accessModes', 'resources']);
    expect(pvc.metadata.annotations).toBeUndefined();
  });

  it('writes the storage class, and "" as such (dynamic provisioning off)', () => {
    expect(only({ storageClass: 'fast-ssd' }).spec.storageClassName).toBe('fast-ssd');
    expect(only({ storageClass: '' }).spec).toHaveProperty('storageClassName', '');
  });

  it('binds to the named PersistentVolume and selects by the label selector', () => {
    const selector = { matchLabels: { disk: 'ssd' }, matchExpressions: [{ key: 'zone', operator: 'In', values: ['a', 'b'] }] };
    const pvc = only({ volumeName: 'pv-log', selector });
    expect(pvc.spec.volumeName).toBe('pv-log');
    expect(pvc.spec.selector).toEqual(selector);
  });

  it('writes the annotations', () => {
    expect(only({ annotations: { 'backup.example.com/policy': 'daily' } }).metadata.annotations).toEqual({ 'backup.example.com/policy': 'daily' });
  });

  it("labels part-of uyuni, component storage by default, beside the claim's own labels, which cannot replace ours", () => {
    expect(only({}).metadata.labels).toEqual({
      'app.kubernetes.io/part-of': 'uyuni', 'app.kubernetes.io/component': 'storage', 'app.kubernetes.io/managed-by': 'uyuni-cdk',
    });
    const labels = only({ labels: { tier: 'logs', 'app.kubernetes.io/part-of': 'other' } }).metadata.labels;
    expect(labels).toEqual({
      tier: 'logs', 'app.kubernetes.io/part-of': 'uyuni', 'app.kubernetes.io/component': 'storage', 'app.kubernetes.io/managed-by': 'uyuni-cdk',
    });
  });

  it('labels the product it belongs to (partOf)', () => {
    const [pvc] = synth({ partOf: 'uyuni-proxy' });
    expect(pvc.metadata.labels!['app.kubernetes.io/part-of']).toBe('uyuni-proxy');
  });

  it('exposes the claims it was given', () => {
    const chart = Testing.chart();
    const claims = new Claims(chart, 'Claims', { namespace: 'uyuni', claims: [MINIMAL] });
    expect(claims.claims).toEqual([MINIMAL]);
  });
});

describe('claimVolumes and claimMounts', () => {
  const volumes: VolumeSpec[] = [
    { name: 'var-log', mountPath: '/var/log', size: '2Gi', owner: 'server' },
    { name: 'srv-www', mountPath: '/srv/www/', size: '100Gi', owner: 'server' },
  ];

  it('names each pod volume after its claim', () => {
    expect(claimVolumes(volumes)).toEqual([
      { name: 'var-log', persistentVolumeClaim: { claimName: 'var-log' } },
      { name: 'srv-www', persistentVolumeClaim: { claimName: 'srv-www' } },
    ]);
  });

  it('mounts each claim at its path, or under a prefix', () => {
    expect(claimMounts(volumes)).toEqual([{ name: 'var-log', mountPath: '/var/log' }, { name: 'srv-www', mountPath: '/srv/www/' }]);
    expect(claimMounts(volumes, '/mnt')).toEqual([{ name: 'var-log', mountPath: '/mnt/var/log' }, { name: 'srv-www', mountPath: '/mnt/srv/www/' }]);
  });
});
