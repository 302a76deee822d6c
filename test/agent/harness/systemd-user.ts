/**
 * A private session bus and a real `systemd --user` for tests (spec §5): never `--system`, never the
 * host's units. The manager runs in its own mount namespace where a tmpfs on /run/systemd carries
 * the `/run/systemd/system` marker it insists on; everything else lives in a fresh temp dir.
 * Both processes are stopped by PID in stop().
 */
import { ChildProcess, execFileSync, spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as dbus from 'dbus-next';

export interface UserSystemd {
  readonly base: string;
  readonly home: string;
  readonly unitDir: string;
  readonly busAddress: string;
  /** Environment for processes that talk to this manager (the agent CLI, systemctl --user). */
  readonly env: NodeJS.ProcessEnv;
  systemctl(...args: string[]): string;
  /** `systemctl --user show -p <prop> --value <unit>` */
  show(unit: string, prop: string): string;
  stop(): Promise<void>;
}

function waitExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(t);
      resolve(true);
    });
  });
}

async function managerAnswers(address: string): Promise<boolean> {
  const bus = dbus.sessionBus({ busAddress: address });
  try {
    await new Promise<void>((resolve, reject) => {
      bus.once('connect', () => resolve());
      bus.once('error', reject);
    });
    const msg = new dbus.Message({
      destination: 'org.freedesktop.systemd1', path: '/org/freedesktop/systemd1', interface: 'org.freedesktop.DBus.Properties',
      member: 'Get', signature: 'ss', body: ['org.freedesktop.systemd1.Manager', 'SystemState'],
    });
    const reply = await bus.call(msg);
    return ['running', 'degraded'].includes(reply?.body[0]?.value);
  } catch {
    return false;
  } finally {
    bus.disconnect();
  }
}

/** Field 22 of /proc/<pid>/stat (start time in clock ticks), or undefined when gone. */
function startTime(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** Every live process below `root` in the process tree, with its start time. */
function descendants(root: number): Array<{ pid: number; start: string }> {
  const parent = new Map<number, number>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      parent.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const out: Array<{ pid: number; start: string }> = [];
  const below = (pid: number): boolean => {
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) if (p === root) return true;
    return false;
  };
  for (const pid of parent.keys()) {
    const start = startTime(pid);
    if (start !== undefined && below(pid)) out.push({ pid, start });
  }
  return out;
}

export async function startUserSystemd(): Promise<UserSystemd> {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'uyuni-agent-test-'));
  const runtime = path.join(base, 'run');
  const config = path.join(base, 'config');
  const home = path.join(base, 'home');
  for (const d of [runtime, config, home]) fs.mkdirSync(d, { recursive: true, mode: 0o700 });
  const unitDir = path.join(config, 'systemd', 'user');
  fs.mkdirSync(unitDir, { recursive: true });
  const busAddress = `unix:path=${runtime}/bus`;
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    LANG: 'C.UTF-8',
    XDG_RUNTIME_DIR: runtime,
    XDG_CONFIG_HOME: config,
    HOME: home,
    DBUS_SESSION_BUS_ADDRESS: busAddress,
  };

  const bus = spawn('dbus-daemon', ['--session', `--address=${busAddress}`, '--nofork', '--print-address'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('dbus-daemon did not print its address')), 10_000);
      bus.stdout!.once('data', () => {
        clearTimeout(t);
        resolve();
      });
      bus.once('error', reject);
      bus.once('exit', (code) => reject(new Error(`dbus-daemon exited with ${code}`)));
    });
  } catch (e) {
    bus.kill('SIGKILL');
    fs.rmSync(base, { recursive: true, force: true });
    throw e;
  }
  const manager = spawn('unshare', ['--mount', '--propagation', 'private', 'sh', '-c',
    'mount -t tmpfs tmpfs /run/systemd && mkdir -p /run/systemd/system && exec /lib/systemd/systemd --user'],
  { env, stdio: ['ignore', fs.openSync(path.join(base, 'systemd.log'), 'a'), fs.openSync(path.join(base, 'systemd.log'), 'a')] });

  const stop = async (): Promise<void> => {
    if (manager.pid && manager.exitCode === null) {
      // Units that ignore SIGTERM can outlive the manager (reparented to PID 1): note every
      // process the manager started, by PID and start time, and kill what is left of them.
      const started = descendants(manager.pid);
      manager.kill('SIGTERM');
      if (!(await waitExit(manager, 15_000))) manager.kill('SIGKILL');
      for (const p of started) if (startTime(p.pid) === p.start) process.kill(p.pid, 'SIGKILL');
    }
    if (bus.pid && bus.exitCode === null) {
      bus.kill('SIGTERM');
      if (!(await waitExit(bus, 5_000))) bus.kill('SIGKILL');
    }
    fs.rmSync(base, { recursive: true, force: true });
  };

  const deadline = Date.now() + 20_000;
  while (!(await managerAnswers(busAddress))) {
    if (manager.exitCode !== null || Date.now() > deadline) {
      const log = fs.existsSync(path.join(base, 'systemd.log')) ? fs.readFileSync(path.join(base, 'systemd.log'), 'utf8') : '';
      await stop();
      throw new Error(`systemd --user did not come up on ${busAddress}: ${log}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }

  const systemctl = (...args: string[]): string => execFileSync('systemctl', ['--user', ...args], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return {
    base, home, unitDir, busAddress, env, systemctl,
    show: (unit, prop) => systemctl('show', '-p', prop, '--value', unit).trim(),
    stop,
  };
}
