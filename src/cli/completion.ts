import type { Command, Option } from 'commander';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { EXIT } from '../plan/exit-codes';

/**
 * `uyuni-cdk completion bash|zsh|fish` prints a script for the shell, as `kubectl completion`
 * does; the script asks the command itself (`uyuni-cdk __complete -- <words>`) for the
 * candidates, so verbs, flags and their choices come from the same definitions as `--help`, and
 * plan directories and step names from the plans on disk. An empty answer lets the shell complete
 * file names (kubeconfig, run directory, configuration).
 */

const SCRIPTS = {
  bash: `# uyuni-cdk completion for bash. Load it with: source <(uyuni-cdk completion bash)
# or install it: uyuni-cdk completion bash > /etc/bash_completion.d/uyuni-cdk
_uyuni_cdk() {
  local IFS=$'\\n'
  COMPREPLY=($(uyuni-cdk __complete -- "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
  # a directory to go into: no space after it
  if [[ \${#COMPREPLY[@]} -eq 1 && \${COMPREPLY[0]} == */ ]]; then compopt -o nospace 2>/dev/null; fi
}
complete -o default -F _uyuni_cdk uyuni-cdk
`,
  zsh: `#compdef uyuni-cdk
# uyuni-cdk completion for zsh. Load it with: source <(uyuni-cdk completion zsh)
# (after compinit), or install it as _uyuni-cdk in a directory of $fpath.
_uyuni_cdk() {
  local -a candidates
  candidates=("\${(@f)$(uyuni-cdk __complete -- "\${(@)words[2,CURRENT]}" 2>/dev/null)}")
  candidates=(\${candidates:#})
  if (( \${#candidates} )); then compadd -- "\${candidates[@]}"; else _files; fi
}
compdef _uyuni_cdk uyuni-cdk
`,
  fish: `# uyuni-cdk completion for fish. Load it with: uyuni-cdk completion fish | source
# or install it: uyuni-cdk completion fish > ~/.config/fish/completions/uyuni-cdk.fish
function __uyuni_cdk_complete
  set -l candidates (uyuni-cdk __complete -- (commandline -opc)[2..-1] (commandline -ct) 2>/dev/null)
  if test (count $candidates) -gt 0
    printf '%s\\n' $candidates
  else
    __fish_complete_path (commandline -ct)
  end
end
complete -c uyuni-cdk -f -a '(__uyuni_cdk_complete)'
`,
} as const;

type Shell = keyof typeof SCRIPTS;

export function register(program: Command): void {
  program.command('completion')
    .argument('<shell>', `the shell: ${Object.keys(SCRIPTS).join(', ')}`)
    .description('Print the shell completion script (verbs, flags and their values, plan directories, step names)')
    .addHelpText('after', `
Exit codes: ${EXIT.ok} printed, ${EXIT.badInput} no script for that shell.

Examples:
  source <(uyuni-cdk completion bash)                   # in ~/.bashrc
  mkdir -p ~/.zfunc && uyuni-cdk completion zsh > ~/.zfunc/_uyuni-cdk   # with fpath+=(~/.zfunc) in ~/.zshrc
  uyuni-cdk completion fish > ~/.config/fish/completions/uyuni-cdk.fish`)
    .action((shell: string) => {
      if (!Object.hasOwn(SCRIPTS, shell)) {
        process.stderr.write(`uyuni-cdk: completion: no script for '${shell}': choose ${Object.keys(SCRIPTS).join(', ')}\n`);
        process.exitCode = EXIT.badInput;
        return;
      }
      process.stdout.write(SCRIPTS[shell as Shell]);
    });
  program.command('__complete', { hidden: true })
    .argument('[words...]', 'the words after `uyuni-cdk`, the last one the word being completed')
    .allowUnknownOption()
    .action((words: string[]) => {
      const candidates = complete(program, words);
      if (candidates.length) process.stdout.write(`${candidates.join('\n')}\n`);
    });
}

const visible = (c: Command) => !c.name().startsWith('__');

/** The options of `cmd` and of the commands above it (global flags such as --debug). */
function optionsOf(cmd: Command): Option[] {
  const out: Option[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) out.push(...c.options.filter((o) => !o.hidden));
  return out;
}

const takesValue = (o: Option) => o.required || o.optional;

function findOption(cmd: Command, word: string): Option | undefined {
  const flag = word.split('=')[0];
  return optionsOf(cmd).find((o) => o.long === flag || o.short === flag);
}

/** The candidates for the last of `words` (the one being completed; '' for a new word). */
export function complete(program: Command, words: readonly string[]): string[] {
  const cur = words.length ? words[words.length - 1] : '';
  const prior = words.slice(0, -1);
  let cmd = program;
  const positionals: string[] = [];
  let pendingValue: Option | undefined;
  for (const w of prior) {
    if (pendingValue) {
      pendingValue = undefined;
      continue;
    }
    const sub = positionals.length === 0 ? cmd.commands.find((c) => c.name() === w || c.aliases().includes(w)) : undefined;
    if (sub) {
      cmd = sub;
    } else if (w.startsWith('-')) {
      const o = findOption(cmd, w);
      if (o && takesValue(o) && !w.includes('=')) pendingValue = o;
    } else {
      positionals.push(w);
    }
  }
  const starting = (xs: Iterable<string>) => [...xs].filter((x) => x.startsWith(cur));
  if (pendingValue) return starting(valuesOf(pendingValue, prior, positionals));
  if (cur.startsWith('-')) return starting(optionsOf(cmd).flatMap((o) => (o.long ? [o.long] : o.short ? [o.short] : [])));
  const subs = cmd.commands.filter(visible);
  if (subs.length) return starting(subs.map((c) => c.name()));
  // the verbs' positional argument is a plan directory (or the agent's, none)
  return cmd.registeredArguments.length ? planDirs(cur) : [];
}

function valuesOf(o: Option, prior: readonly string[], positionals: readonly string[]): string[] {
  if (o.argChoices?.length) return [...o.argChoices];
  if (o.long === '--rerun') return positionals.flatMap(stepsOf);
  if (o.long === '--context') return contextsOf(flagValue(prior, '--kubeconfig'));
  return []; // a file, a number, a name: the shell's own completion
}

function flagValue(words: readonly string[], flag: string): string | undefined {
  for (let i = words.length - 1; i >= 0; i--) {
    if (words[i] === flag) return words[i + 1];
    if (words[i].startsWith(`${flag}=`)) return words[i].slice(flag.length + 1);
  }
  return undefined;
}

/** The step names of a plan directory (or its uyuni.plan); none for anything else. */
function stepsOf(dir: string): string[] {
  try {
    const index = fs.statSync(dir).isDirectory() ? path.join(dir, 'uyuni.plan') : dir;
    const plan = JSON.parse(fs.readFileSync(index, 'utf8')) as { steps?: Array<{ name?: unknown }> };
    return (plan.steps ?? []).map((s) => s.name).filter((n): n is string => typeof n === 'string');
  } catch {
    return [];
  }
}

/** The contexts of the kubeconfig kubectl would read (the first file of $KUBECONFIG). */
function contextsOf(kubeconfig: string | undefined): string[] {
  const file = kubeconfig ?? process.env.KUBECONFIG?.split(path.delimiter).find(Boolean) ?? path.join(os.homedir(), '.kube', 'config');
  try {
    const doc = (require('yaml') as typeof import('yaml')).parse(fs.readFileSync(file, 'utf8')) as { contexts?: Array<{ name?: unknown }> };
    return (doc?.contexts ?? []).map((c) => c.name).filter((n): n is string => typeof n === 'string');
  } catch {
    return [];
  }
}

const isPlanDir = (dir: string) => fs.existsSync(path.join(dir, 'uyuni.plan'));

/**
 * Directories below the word typed so far that are plans (complete), or hold plans (`dist/`, to
 * go into); with nothing typed, the plans under ./dist first of all.
 */
function planDirs(cur: string): string[] {
  const base = cur.endsWith('/') ? cur : path.dirname(cur) === '.' && !cur.startsWith('./') ? '' : `${path.dirname(cur)}/`;
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(base || '.', { withFileTypes: true });
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const e of entries) {
    if (!e.isDirectory() || e.name.startsWith('.')) continue;
    const dir = `${base}${e.name}`;
    if (!dir.startsWith(cur)) continue;
    if (isPlanDir(dir)) out.push(dir);
    else if (holdsPlans(dir)) out.push(`${dir}/`);
  }
  return out.sort();
}

function holdsPlans(dir: string): boolean {
  try {
    return fs.readdirSync(dir, { withFileTypes: true }).some((e) => e.isDirectory() && isPlanDir(path.join(dir, e.name)));
  } catch {
    return false;
  }
}
