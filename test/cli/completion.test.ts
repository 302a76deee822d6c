/**
 * Shell completion: `uyuni-cdk completion bash` sourced into a real bash, which completes verbs,
 * flags, flag values, plan directories and step names by asking `uyuni-cdk __complete`.
 */
import { spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { buildProgram } from '../../src/cli/main';
import { EXIT } from '../../src/plan/exit-codes';
import { tempDir } from '../helpers/synth';
import { BIN } from '../runtime/e2e/harness';

const ROOT = path.join(__dirname, '..', '..');

/** A project with the committed plans in dist/, and `uyuni-cdk` on PATH as a user has it. */
function project(): { cwd: string; env: NodeJS.ProcessEnv } {
  const cwd = tempDir();
  fs.cpSync(path.join(ROOT, 'dist'), path.join(cwd, 'dist'), { recursive: true });
  const binDir = tempDir();
  fs.writeFileSync(path.join(binDir, 'uyuni-cdk'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@"\n`, { mode: 0o755 });
  fs.writeFileSync(path.join(cwd, 'kubeconfig'), 'apiVersion: v1\nkind: Config\ncontexts:\n- name: prod\n  context: {cluster: c}\n- name: staging\n  context: {cluster: c}\n');
  return { cwd, env: { ...process.env, PATH: `${binDir}${path.delimiter}${process.env.PATH}` } };
}

const { cwd, env } = project();

/** What bash offers for the command line `line` (the cursor at its end), through the sourced script. */
function bashComplete(line: string): string[] {
  const script = `
    source <(uyuni-cdk completion bash)
    line=${JSON.stringify(line)}
    read -ra COMP_WORDS <<< "$line"
    [[ "$line" == *" " ]] && COMP_WORDS+=("")
    COMP_CWORD=$(( \${#COMP_WORDS[@]} - 1 ))
    _uyuni_cdk
    printf '%s\\n' "\${COMPREPLY[@]}"`;
  const r = spawnSync('bash', ['-c', script], { cwd, env, encoding: 'utf8' });
  expect(r.stderr).toBe('');
  return r.stdout.split('\n').filter(Boolean);
}

describe('bash completion', () => {
  it('completes the verbs, without the hidden one', () => {
    const verbs = buildProgram().commands.map((c) => c.name()).filter((n) => !n.startsWith('__'));
    expect(verbs).toEqual(expect.arrayContaining(['init', 'synth', 'run', 'plan', 'status', 'destroy', 'logs', 'support', 'agent', 'completion']));
    expect(bashComplete('uyuni-cdk ')).toEqual(verbs);
    expect(bashComplete('uyuni-cdk st')).toEqual(['status']);
    expect(bashComplete('uyuni-cdk agent ')).toEqual(['render', 'cleanup', 'run']);
  });

  it('completes plan directories: dist/ to go into, then the plans in it', () => {
    expect(bashComplete('uyuni-cdk run ')).toEqual(['dist/']);
    expect(bashComplete('uyuni-cdk plan dist/m')).toEqual(['dist/migrate', 'dist/migrate-prepare']);
    // dist/agent holds a unit file, not a plan
    expect(bashComplete('uyuni-cdk status dist/')).not.toContain('dist/agent');
  });

  it('completes the flags of the verb and the global ones', () => {
    expect(bashComplete('uyuni-cdk run dist/install --re')).toEqual(['--rerun']);
    expect(bashComplete('uyuni-cdk plan dist/install --deb')).toEqual(['--debug']);
  });

  it('completes --rerun with the step names of the plan on the line, and choices and contexts', () => {
    const steps = JSON.parse(fs.readFileSync(path.join(cwd, 'dist', 'migrate', 'uyuni.plan'), 'utf8')).steps.map((s: { name: string }) => s.name);
    expect(bashComplete('uyuni-cdk run dist/migrate --rerun ')).toEqual(steps);
    expect(bashComplete('uyuni-cdk run dist/migrate --rerun data')).toEqual(['data-sync', 'database']);
    expect(bashComplete('uyuni-cdk status dist/install -o ')).toEqual(['text', 'json', 'yaml']);
    expect(bashComplete('uyuni-cdk run dist/install --kubeconfig kubeconfig --context ')).toEqual(['prod', 'staging']);
  });

  it('leaves file names to bash for a flag that takes a file', () => {
    expect(bashComplete('uyuni-cdk run dist/install --kubeconfig ')).toEqual([]);
  });
});

describe('the completion verb', () => {
  it('prints a script for zsh and fish that asks the same __complete', () => {
    for (const shell of ['zsh', 'fish']) {
      const r = spawnSync(process.execPath, [BIN, 'completion', shell], { encoding: 'utf8' });
      expect(r.status).toBe(0);
      expect(r.stdout).toContain('uyuni-cdk __complete --');
    }
  });

  it('refuses a shell it has no script for, naming the ones it has', () => {
    const r = spawnSync(process.execPath, [BIN, 'completion', 'pwsh'], { encoding: 'utf8' });
    expect(r.status).toBe(EXIT.badInput);
    expect(r.stderr).toBe("uyuni-cdk: completion: no script for 'pwsh': choose bash, zsh, fish\n");
  });
});

describe('a reader that goes away (uyuni-cdk ... | head)', () => {
  it('ends the command quietly with 141, as SIGPIPE would, without a stack trace', async () => {
    const child = spawn(process.execPath, [BIN, 'completion', 'bash'], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d) => { stderr += d; });
    const status = await new Promise((resolve) => child.on('close', resolve));
    expect({ status, stderr }).toEqual({ status: 141, stderr: '' });
  });
});
