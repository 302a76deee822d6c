/**
 * Pod → systemd units: the single source of the unit text, used by the synth side (what a node
 * will run, written beside the Pod manifest) and by the agent (what a unit on disk must equal).
 *
 * One unit per container (spec §2); init containers become `Type=oneshot` units that run in
 * order, `Before=` every later init unit and every app unit, and are `Requires=`d by them.
 */
import * as path from 'path';
import { DEFAULT_PACKAGE_DIR, DEFAULT_SLICE } from './defaults';
import { environmentAssignment, execLine, UnitValueError } from './escape';
import { ContainerLike, PodLike, podIsTerminating, podKey, podShapeProblems } from './pod';
import { SecurityContextError, securityDirectives } from './security';
import { renderUnitFile, Section, UnitFile } from './unit';
import { assertUnitName, podUnitName } from './unit-name';

export interface RenderOptions {
  /** Render for the user manager (`systemd --user`): no `User=`, `WantedBy=default.target`. @default false */
  readonly session?: boolean;
  /** Root under which a relative `command[0]` resolves, as `<packageDir>/<image-name>-<image-tag>/`. @default /opt/stackable/packages */
  readonly packageDir?: string;
  /** Written into every unit as `KUBECONFIG` (the kubeconfig the agent itself uses). */
  readonly kubeconfig: string;
  /** The slice every unit is put into. @default system-stackable.slice */
  readonly slice?: string;
}

/** A pod that cannot become units; the message names the pod and the field. */
export class PodRenderError extends Error {}

export interface RenderedUnit {
  readonly name: string;
  readonly content: string;
  readonly container: string;
  readonly init: boolean;
  /** The resolved command path (ExecStart's first word), for the agent's "is it installed" check. */
  readonly executable: string;
}

const USER_NAME = /^[a-zA-Z_][a-zA-Z0-9_-]{0,30}$/;

const RESTART: Readonly<Record<string, string>> = { Always: 'always', OnFailure: 'on-failure', Never: 'on-abnormal' };

/** Refuses a pod whose fields have the wrong types (src/systemd/pod.ts `podShapeProblems`), naming them. */
function assertPodShape(pod: PodLike): void {
  const problems = podShapeProblems(pod);
  if (problems.length) throw new PodRenderError(problems.join('; '));
}

/** The unit names a pod owns (init containers first), without rendering their content. */
export function podUnitNames(pod: PodLike): string[] {
  assertPodShape(pod);
  const name = pod.metadata?.name;
  if (!name) throw new PodRenderError('a pod without metadata.name cannot be rendered');
  const containers = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  return containers.map((c) => podUnitName(pod.metadata?.namespace, name, c.name));
}

function packageRoot(image: string | undefined, where: string, packageDir: string): string {
  // `<name>:<tag>`; a registry or repository prefix does not take part in the package directory.
  const m = /^(?:.*\/)?([^/:@]+):([^/:@]+)$/.exec(image ?? '');
  if (!m || m[1] === '..' || m[2] === '..' || m[1] === '.' || m[2] === '.') {
    throw new PodRenderError(`${where}.image: ${JSON.stringify(image)} must be <name>:<tag> (the package directory is <package-dir>/<name>-<tag>/)`);
  }
  return path.posix.join(packageDir, `${m[1]}-${m[2]}`);
}

function commandPath(container: ContainerLike, where: string, packageDir: string): string {
  const cmd = container.command?.[0];
  if (!cmd) throw new PodRenderError(`${where}.command: a command is required (there is no image entrypoint on a systemd node)`);
  if (cmd.startsWith('/')) return path.posix.normalize(cmd);
  const root = packageRoot(container.image, where, packageDir);
  const resolved = path.posix.join(root, cmd);
  if (!resolved.startsWith(`${root}/`)) {
    throw new PodRenderError(`${where}.command[0]: ${JSON.stringify(cmd)} leaves the package directory ${root}`);
  }
  return resolved;
}

function environment(container: ContainerLike, where: string, kubeconfig: string): string[] {
  // Later entries win, as in Kubernetes; the pod's own KUBECONFIG wins over the agent's.
  const vars = new Map<string, string>([['KUBECONFIG', kubeconfig]]);
  for (const [i, env] of (container.env ?? []).entries()) {
    if (env.valueFrom !== undefined && env.valueFrom !== null) {
      throw new PodRenderError(`${where}.env[${i}] (${env.name}): valueFrom is not supported on systemd nodes; give a value`);
    }
    vars.set(env.name, env.value ?? '');
  }
  return [...vars].map(([name, value]) => {
    try {
      return environmentAssignment(name, value);
    } catch (e) {
      throw new PodRenderError(`${where}.env: ${(e as Error).message}`);
    }
  });
}

function userOf(pod: PodLike, container: ContainerLike, where: string): string | undefined {
  const user = container.securityContext?.windowsOptions?.runAsUserName ?? pod.spec?.securityContext?.windowsOptions?.runAsUserName;
  if (user !== undefined && !USER_NAME.test(user)) {
    throw new PodRenderError(`${where}: runAsUserName ${JSON.stringify(user)} must match ${USER_NAME.source}`);
  }
  return user;
}

/** Renders the units of one pod, init container units first. */
export function renderPodUnits(pod: PodLike, options: RenderOptions): RenderedUnit[] {
  assertPodShape(pod);
  const key = podKey(pod);
  const session = options.session ?? false;
  const packageDir = options.packageDir ?? DEFAULT_PACKAGE_DIR;
  const slice = assertUnitName(options.slice ?? DEFAULT_SLICE, 'the slice');
  if (!slice.endsWith('.slice')) throw new PodRenderError(`the slice ${JSON.stringify(slice)} must end in .slice`);
  if (!path.posix.isAbsolute(packageDir)) throw new PodRenderError(`the package directory ${JSON.stringify(packageDir)} must be absolute`);
  const spec = pod.spec ?? {};
  if (!spec.containers || spec.containers.length === 0) throw new PodRenderError(`pod ${key}: spec.containers is empty`);

  const restartPolicy = spec.restartPolicy ?? 'Always';
  const restart = RESTART[restartPolicy];
  if (!restart) throw new PodRenderError(`pod ${key}: spec.restartPolicy ${JSON.stringify(restartPolicy)} must be one of ${Object.keys(RESTART).join(', ')}`);
  const grace = spec.terminationGracePeriodSeconds ?? 30;
  if (!Number.isInteger(grace) || grace < 0) throw new PodRenderError(`pod ${key}: spec.terminationGracePeriodSeconds must be a whole number of seconds ≥ 0`);

  let names: string[];
  try {
    names = podUnitNames(pod);
  } catch (e) {
    throw new PodRenderError((e as Error).message);
  }
  const seen = new Set<string>();
  for (const n of names) {
    if (seen.has(n)) throw new PodRenderError(`pod ${key}: two containers map to the unit ${n}`);
    seen.add(n);
  }

  const inits = spec.initContainers ?? [];
  const all = [...inits.map((c) => ({ c, init: true })), ...spec.containers.map((c) => ({ c, init: false }))];
  return all.map(({ c, init }, i) => {
    const name = names[i];
    const where = `pod ${key}: spec.${init ? 'initContainers' : 'containers'}[${init ? i : i - inits.length}]`;
    const argv = [commandPath(c, where, packageDir), ...(c.command ?? []).slice(1), ...(c.args ?? [])];
    let exec: string;
    try {
      exec = execLine(argv);
    } catch (e) {
      if (e instanceof UnitValueError) throw new PodRenderError(`${where}: ${e.message}`);
      throw e;
    }
    const user = session ? undefined : userOf(pod, c, where);
    const earlierInits = names.slice(0, Math.min(i, inits.length));
    const later = init ? names.slice(i + 1) : [];

    const unit: Record<Section, Array<[string, string]>> = { Unit: [], Service: [], Install: [] };
    unit.Unit.push(['Description', name.slice(0, -'.service'.length)], ['StartLimitIntervalSec', '0']);
    if (later.length) unit.Unit.push(['Before', later.join(' ')]);
    if (earlierInits.length) unit.Unit.push(['Requires', earlierInits.join(' ')]);
    for (const env of environment(c, where, options.kubeconfig)) unit.Service.push(['Environment', env]);
    unit.Service.push(['ExecStart', exec]);
    if (init) {
      // Runs to completion once; stays "active" so the app units ordered after it can start.
      unit.Service.push(['Type', 'oneshot'], ['RemainAfterExit', 'yes']);
    } else {
      unit.Service.push(['RemainAfterExit', restart === 'always' ? 'no' : 'yes'], ['Restart', restart], ['RestartSec', '2']);
    }
    unit.Service.push(
      ['Slice', slice],
      ['StandardError', 'journal'],
      ['StandardOutput', 'journal'],
      ['TimeoutStopSec', String(grace)],
    );
    let security: Array<[string, string]>;
    try {
      security = securityDirectives(pod, c);
    } catch (e) {
      if (e instanceof SecurityContextError) throw new PodRenderError(`${where}: ${e.message}`);
      throw e;
    }
    // runAsUser (numeric) is the kubelet's field; it wins over the reference's runAsUserName.
    if (user && !security.some(([k]) => k === 'User')) unit.Service.push(['User', user]);
    unit.Service.push(...security);
    unit.Install.push(['WantedBy', session ? 'default.target' : 'multi-user.target']);
    const file: UnitFile = { name, directives: unit };
    return { name, content: renderUnitFile(file), container: c.name, init, executable: argv[0] };
  });
}

export interface ExpectedUnit {
  readonly name: string;
  readonly content: string;
  /** `namespace/name` of the pod that owns it. */
  readonly pod: string;
  readonly terminating: boolean;
}

/** The units a set of pods (those bound to one node) should have. */
export interface NodeUnits {
  readonly units: ReadonlyMap<string, ExpectedUnit>;
  /** Unit names more than one pod maps to: reported, never merged, never rendered. */
  readonly collisions: ReadonlyMap<string, readonly string[]>;
  /** Pods that cannot be rendered, with the unit names they own when those are known. */
  readonly errors: ReadonlyArray<{ readonly pod: string; readonly message: string; readonly unitNames: readonly string[] }>;
}

export function renderNodeUnits(pods: readonly PodLike[], options: RenderOptions): NodeUnits {
  const owners = new Map<string, string[]>();
  const units = new Map<string, ExpectedUnit>();
  const errors: Array<{ pod: string; message: string; unitNames: string[] }> = [];
  for (const pod of pods) {
    const key = podKey(pod);
    let names: string[] = [];
    try {
      names = podUnitNames(pod);
    } catch {
      // The render below reports the reason.
    }
    for (const n of new Set(names)) owners.set(n, [...(owners.get(n) ?? []), key]);
    try {
      for (const u of renderPodUnits(pod, options)) {
        units.set(u.name, { name: u.name, content: u.content, pod: key, terminating: podIsTerminating(pod) });
      }
    } catch (e) {
      if (!(e instanceof PodRenderError)) throw e;
      errors.push({ pod: key, message: e.message, unitNames: names });
    }
  }
  const collisions = new Map<string, string[]>();
  for (const [name, pods] of owners) {
    if (pods.length > 1) {
      collisions.set(name, pods);
      units.delete(name);
    }
  }
  return { units, collisions, errors };
}
