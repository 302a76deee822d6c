// Every committed plan directory as kustomize (Debian's kubectl kustomize, the kustomize Argo CD and
// Flux embed too) renders it: the step files in plan order, each object in its step's sync wave.
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { parse, parseAllDocuments } from 'yaml';
import { PLAN_INDEX, readPlan } from '../../src/plan/reader';
import { KUSTOMIZATION } from '../../src/plans/kustomization';
import { ROOT, tempDir } from '../helpers/synth';
import { KUBECTL } from '../sim/helpers';

const DIST = path.join(ROOT, 'dist');
const PLANS = fs.readdirSync(DIST).filter((d) => fs.existsSync(path.join(DIST, d, PLAN_INDEX))).sort();
const WAVE = 'argocd.argoproj.io/sync-wave';

/** `kubectl kustomize <dir>`: needs no cluster, so no kubeconfig either. */
function kustomize(dir: string): string {
  const home = tempDir('kustomize-home-');
  try {
    return execFileSync(KUBECTL, ['kustomize', dir], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: home, KUBECONFIG: '/dev/null' }, timeout: 60_000 });
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}

describe('the committed plan directories', () => {
  it('are all there: every plan a synth writes', () => {
    expect(PLANS).toEqual(['backup', 'install', 'migrate', 'migrate-prepare', 'node-services', 'proxy', 'restore', 'ssl-addca', 'ssl-rotate', 'upgrade']);
  });

  describe.each(PLANS)('dist/%s', (name) => {
    const dir = path.join(DIST, name);
    const plan = readPlan(dir);

    it(`holds a ${KUSTOMIZATION} listing its step files in plan order, and no kustomization.yaml kubectl apply -f would refuse`, () => {
      const k = parse(fs.readFileSync(path.join(dir, KUSTOMIZATION), 'utf8'));
      expect(k).toEqual({
        apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', sortOptions: { order: 'fifo' }, resources: plan.steps.map((s) => s.file),
      });
      expect(fs.readdirSync(dir).filter((f) => /^kustomization\.ya?ml$/.test(f))).toEqual([]);
    });

    it('renders with kubectl kustomize: every object of the index, in step order, each in its step\'s wave', () => {
      expect(fs.existsSync(KUBECTL)).toBe(true);
      const rendered = parseAllDocuments(kustomize(dir)).map((d) => d.toJS()).filter(Boolean);
      const expected = plan.steps.flatMap((s, i) => s.objects.map((o) => ({ kind: o.kind, name: o.name, namespace: o.namespace, wave: String(i) })));
      expect(rendered.map((o: any) => ({ kind: o.kind, name: o.metadata.name, namespace: o.metadata.namespace, wave: o.metadata.annotations?.[WAVE] }))).toEqual(expected);
      // Waves never go down: Argo CD applies them lowest first.
      const waves = rendered.map((o: any) => Number(o.metadata.annotations[WAVE]));
      expect(waves).toEqual([...waves].sort((a, b) => a - b));
      expect(Math.max(...waves)).toBe(plan.steps.length - 1);
    });
  });
});
