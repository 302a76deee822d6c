/**
 * The users' own way of applying dist/: every committed plan through kubectl (built with the plane,
 * the API server's minor) against kube-apiserver, with server-side field validation (kubectl's
 * default `--validate=strict`), defaulting and admission — what the simulator cannot check: its
 * schemas, immutable fields and admission plugins are its own.
 */
import * as fs from 'fs';
import * as path from 'path';
import { readPlan } from '../../src/plan/reader';
import { plane } from './helpers';
import { ROOT } from './plane/plane';

const p = plane();
const plans = fs.readdirSync(path.join(ROOT, 'dist')).filter((d) => fs.existsSync(path.join(ROOT, 'dist', d, 'uyuni.plan'))).sort();

describe('kubectl apply --server-side --dry-run=server of every plan in dist/', () => {
  const namespaces = new Set<string>();

  beforeAll(async () => {
    // Dry runs of namespaced objects need their namespace; the upgrade, backup and restore plans
    // work in one that exists.
    for (const name of plans) {
      const plan = readPlan(path.join(ROOT, 'dist', name));
      for (const step of plan.steps) for (const o of step.objects) if (o.namespace) namespaces.add(o.namespace);
    }
    // A dry run creates no Namespace, so with kubectl alone `--dry-run=server -f dist/install/` on a
    // fresh cluster answers `namespaces "uyuni" not found` for every namespaced object (a real
    // apply creates the Namespace first, from the same files).
    namespaces.delete('default'); // node-services' pods run there
    for (const ns of namespaces) {
      await p.kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--timeout=120s']);
      const made = await p.kubectl(['create', 'namespace', ns]);
      expect({ ns, code: made.code, err: made.err }).toEqual({ ns, code: 0, err: '' });
    }
  });

  afterAll(async () => {
    for (const ns of namespaces) await p.kubectl(['delete', 'namespace', ns, '--timeout=120s']);
  });

  it('finds the plans', () => {
    expect(plans).toEqual(['backup', 'install', 'migrate', 'migrate-prepare', 'node-services', 'proxy', 'restore', 'ssl-addca', 'ssl-rotate', 'upgrade']);
  });

  it.each(plans)('dist/%s: every step file is accepted (-f DIR), and so is its Kustomization (-k)', async (name) => {
    const dir = path.join(ROOT, 'dist', name);
    const plan = readPlan(dir);
    const byFile = await p.kubectl(['apply', '--server-side', '--dry-run=server', '--field-manager=kubectl-test', '-f', dir]);
    expect({ plan: name, code: byFile.code, err: byFile.err }).toEqual({ plan: name, code: 0, err: '' });
    const objects = plan.steps.reduce((n, s) => n + s.objects.length, 0);
    expect(byFile.out.trim().split('\n')).toHaveLength(objects);
    if (fs.existsSync(path.join(dir, 'Kustomization'))) {
      const byKustomize = await p.kubectl(['apply', '--server-side', '--dry-run=server', '--field-manager=kubectl-test', '-k', dir]);
      // kubectl 1.34's kustomize warns that the file's sortOptions (fifo: the step order) win over
      // the --reorder flag kubectl passes; that is the order we want (docs/gitops.md).
      const warnings = byKustomize.err.split('\n').filter((l) => l && !/Warning: Sorting order is set both in 'kustomization.yaml' \('sortOptions'\) and in a CLI flag \('--reorder'\)\. Using the kustomization file over the CLI flag\./.test(l));
      expect({ plan: name, code: byKustomize.code, err: warnings }).toEqual({ plan: name, code: 0, err: [] });
      expect(byKustomize.out.trim().split('\n')).toHaveLength(objects);
    }
  });
});
