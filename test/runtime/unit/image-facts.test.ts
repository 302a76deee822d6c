// The images a step's facts decide (src/runtime/core/image-facts.ts): a restore's recorded images.
import { imagesFromFacts } from '../../../src/runtime/core/image-facts';
import type { Manifest } from '../../../src/runtime/core/manifests';

const SERVER = 'registry.opensuse.org/uyuni/server:2026.08';
const PINNED = `registry.opensuse.org/uyuni/server@sha256:${'ab'.repeat(32)}`;
const deployment = (name: string, containers: object[], initContainers: object[] = []): Manifest => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace: 'uyuni' },
  spec: { template: { spec: { containers, initContainers } } },
} as unknown as Manifest);
const step = { imagesFromFacts: [{ image: SERVER, fact: 'restore_image.server' }] };
const imagesOf = (o: Manifest) => {
  const pod = (o as any).spec.template.spec;
  return [...pod.initContainers, ...pod.containers].map((c: any) => `${c.name}=${c.image}`);
};

describe('imagesFromFacts', () => {
  it('replaces every container and init container naming the synthesized image, and only those', () => {
    const objects = [
      deployment('uyuni', [{ name: 'uyuni', image: SERVER }, { name: 'sidecar', image: 'other:1' }], [{ name: 'init-volumes', image: SERVER }]),
      { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j', namespace: 'uyuni' }, spec: { template: { spec: { containers: [{ name: 'runner', image: SERVER }] } } } } as unknown as Manifest,
    ];
    const r = imagesFromFacts(step, objects, { 'restore_image.server': PINNED });
    expect(imagesOf(r.objects[0])).toEqual([`init-volumes=${PINNED}`, `uyuni=${PINNED}`, 'sidecar=other:1']);
    expect(r.objects[1]).toBe(objects[1]); // Jobs stay as synthesized
    expect(imagesOf(objects[0])).toEqual([`init-volumes=${SERVER}`, `uyuni=${SERVER}`, 'sidecar=other:1']); // the input is not changed
    expect([...r.changed]).toEqual(['Deployment/uyuni (uyuni)']);
    expect(r.pins.map((p) => `${p.container}: ${p.from} → ${p.to}`)).toEqual([`init container init-volumes: ${SERVER} → ${PINNED}`, `container uyuni: ${SERVER} → ${PINNED}`]);
    expect(r.missing).toEqual([]);
  });

  it('a missing or empty fact is named and leaves the image; a fact equal to the image changes nothing', () => {
    const objects = [deployment('uyuni', [{ name: 'uyuni', image: SERVER }])];
    for (const facts of [{}, { 'restore_image.server': '' }] as Array<Record<string, string>>) {
      const r = imagesFromFacts(step, objects, facts);
      expect([r.missing, r.changed.size, r.objects[0]]).toEqual([['restore_image.server'], 0, objects[0]]);
    }
    const same = imagesFromFacts(step, objects, { 'restore_image.server': SERVER });
    expect([same.missing, same.changed.size, same.pins.length]).toEqual([[], 0, 1]);
  });

  it('a step without rules, or without a Deployment naming the image, has nothing to decide', () => {
    const objects = [deployment('db', [{ name: 'db', image: 'registry.opensuse.org/uyuni/server-postgresql:2026.08' }])];
    expect(imagesFromFacts({}, objects, {}).objects).toBe(objects);
    expect(imagesFromFacts(step, objects, {})).toMatchObject({ pins: [], missing: [] });
  });
});
