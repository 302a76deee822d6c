import * as fs from 'fs';
import * as path from 'path';

const SRC = path.join(__dirname, '..', '..', '..', 'src');

function tsFiles(p: string): string[] {
  if (!fs.existsSync(p)) return [];
  if (fs.statSync(p).isFile()) return p.endsWith('.ts') ? [p] : [];
  return fs.readdirSync(p).flatMap((f) => tsFiles(path.join(p, f)));
}

const imports = (file: string) => [...fs.readFileSync(file, 'utf8').matchAll(/(?:from|import|require)\s*\(?\s*['"]([^'"]+)['"]/g)].map((m) => m[1]);

describe('the synth path never loads the runtime', () => {
  const synth = [path.join(SRC, 'main.ts'), ...['plans', 'constructs', 'model', 'config', 'plan', 'systemd'].flatMap((d) => tsFiles(path.join(SRC, d)))];

  it('has synth sources to check', () => {
    expect(synth.filter((f) => fs.existsSync(f)).length).toBeGreaterThan(5);
  });

  it.each(synth.filter((f) => fs.existsSync(f)).map((f) => [path.relative(SRC, f), f]))('%s imports neither src/runtime nor @kubernetes/client-node', (_rel, file) => {
    for (const spec of imports(file)) {
      expect(spec).not.toMatch(/@kubernetes\/client-node/);
      if (spec.startsWith('.')) expect(path.resolve(path.dirname(file), spec)).not.toMatch(/[/\\]src[/\\]runtime([/\\]|$)/);
    }
  });

  it('keeps @kubernetes/client-node inside what talks to the cluster (src/kube and its users src/runtime, src/agent)', () => {
    const talks = (f: string) => ['kube', 'runtime', 'agent'].some((d) => f.includes(`${path.sep}${d}${path.sep}`));
    const outside = tsFiles(SRC).filter((f) => !talks(f) && imports(f).some((s) => s.includes('@kubernetes/client-node')));
    expect(outside.map((f) => path.relative(SRC, f))).toEqual([]);
  });
});
