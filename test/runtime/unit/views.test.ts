/**
 * The views of plan, status and destroy (src/runtime/report/*-view.ts): one interface per verb,
 * text for people or one document for machines, chosen once from `-o`. The verbs' whole output
 * is pinned by the e2e suites; these pin what the choice and the machine documents promise.
 */
import { parse } from 'yaml';
import type { Plan } from '../../../src/plan/types';
import type { DestroyItem } from '../../../src/runtime/core/destroy-result';
import type { PlanResult } from '../../../src/runtime/decide/plan-result';
import { DestroyResult, destroyView } from '../../../src/runtime/report/destroy-view';
import { planView } from '../../../src/runtime/report/plan-view';
import { statusView } from '../../../src/runtime/report/status-view';
import type { ViewFormat } from '../../../src/runtime/report/view';

const plan = { name: 'install', namespace: 'uyuni', steps: [] } as unknown as Plan;
const target = { server: 'https://127.0.0.1:6443', context: 'sim' };

/** A view's output, each write apart. */
function writes(): { out: (t: string) => void; got: string[] } {
  const got: string[] = [];
  return { out: (t) => got.push(t), got };
}

describe('status view', () => {
  const steps = [{ name: 'namespace', state: 'done' as const, detail: '1/1 objects' }, { name: 'server', state: 'waiting' as const, detail: 'Deployment uyuni/uyuni rollout: 0/1' }];

  it('text (the default and -o text): the table, the archiving under it', () => {
    for (const format of [undefined, 'text'] as const) {
      const w = writes();
      statusView({ format, out: w.out }).status(plan, steps, target, { error: 'no db pod' });
      expect(w.got).toEqual([[
        'plan install, namespace uyuni, cluster https://127.0.0.1:6443 (context sim)',
        'STEP       STATE           DETAIL',
        'namespace  done            1/1 objects',
        'server     waiting         Deployment uyuni/uyuni rollout: 0/1',
        'archiving (var-pgsql-walbackup)',
        '  not known: no db pod',
      ].join('\n') + '\n']);
    }
  });

  it('-o json and -o yaml: one and the same document; no archiving key when the plan does not archive', () => {
    const doc = (format: ViewFormat) => {
      const w = writes();
      statusView({ format, out: w.out }).status(plan, steps, target);
      expect(w.got).toHaveLength(1);
      return w.got[0];
    };
    expect(doc('json')).toBe(`${JSON.stringify({ plan: 'install', namespace: 'uyuni', cluster: target, steps })}\n`);
    expect(parse(doc('yaml'))).toEqual(JSON.parse(doc('json')));
  });
});

describe('plan view', () => {
  const r = { steps: [], summary: { create: 1 } } as unknown as PlanResult;

  it('-o json: the verdict is the document; --out adds no line to it', () => {
    const w = writes();
    const view = planView({ format: 'json', out: w.out });
    view.verdict(plan, r, target);
    view.saved('plan.out', 'dist/install', { adopt: true });
    expect(w.got).toEqual([`${JSON.stringify({ plan: 'install', namespace: 'uyuni', cluster: target, steps: [], summary: { create: 1 } })}\n`]);
  });

  it('text: --out says where the plan went and with which decision flags', () => {
    const w = writes();
    planView({ format: 'text', out: w.out }).saved('plan.out', 'dist/install', { adopt: true });
    expect(w.got).toEqual(['\nSaved the plan to plan.out: `uyuni-cdk run plan.out` applies exactly this, with its flags (--adopt), and refuses if the cluster or dist/install changed since.\n']);
  });
});

describe('destroy view', () => {
  const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'uyuni-config', namespace: 'uyuni' };
  const items: DestroyItem[] = [
    { object: 'ConfigMap/uyuni-config (uyuni)', result: 'deleted', ref, uid: 'u-1' },
    { object: 'PersistentVolumeClaim/var-pgsql18 (uyuni)', result: 'kept', detail: 'volumes are kept unless --purge-volumes' },
  ];
  const result: DestroyResult = { plan, target, mode: { yes: true, purgeVolumes: false }, items };

  it('text: the list as soon as it is known, the summary at the end, nothing of its own when the wait fails', () => {
    const w = writes();
    const view = destroyView({ format: 'text', out: w.out });
    view.listed(result);
    expect(w.got).toEqual([[
      'destroy plan install, namespace uyuni, cluster https://127.0.0.1:6443 (context sim)',
      '  deleted       ConfigMap/uyuni-config (uyuni)',
      '  kept          PersistentVolumeClaim/var-pgsql18 (uyuni)  (volumes are kept unless --purge-volumes)',
    ].join('\n') + '\n']);
    view.waitFailed(result, 'timed out');
    expect(w.got).toHaveLength(1);
    view.finished(result, { seconds: 2 });
    expect(w.got[1]).toBe('Destroy complete: 1 deleted and gone, 1 kept (1 PersistentVolumeClaim; --purge-volumes deletes the data).\n');
  });

  it('-o json: one document at the end, without what only the wait needs (ref, uid); waited only when it waited', () => {
    const head = { plan: 'install', namespace: 'uyuni', cluster: target, dryRun: false, items: items.map(({ ref: _r, uid: _u, ...i }) => i) };
    const doc = (fn: (v: ReturnType<typeof destroyView>) => void) => {
      const w = writes();
      const view = destroyView({ format: 'json', out: w.out });
      view.listed(result);
      fn(view);
      expect(w.got).toHaveLength(1);
      return JSON.parse(w.got[0]);
    };
    expect(doc((v) => v.finished(result, { seconds: 2 }))).toEqual({ ...head, waited: { gone: true, seconds: 2 }, summary: expect.stringMatching(/^Destroy complete: /) });
    expect(doc((v) => v.finished(result))).toEqual({ ...head, summary: expect.stringMatching(/^Destroy started: 1 deleted, not waited for \(--wait=false\)/) });
    expect(doc((v) => v.waitFailed(result, 'timed out'))).toEqual({ ...head, waited: { gone: false, message: 'timed out' } });
  });

  it('-o yaml: the same document as YAML', () => {
    const w = writes();
    destroyView({ format: 'yaml', out: w.out }).finished({ ...result, mode: { yes: false, purgeVolumes: false } });
    expect(parse(w.got[0])).toMatchObject({ plan: 'install', dryRun: true, summary: expect.stringMatching(/^Dry run: /) });
  });
});
