/**
 * SystemdManager (dbus-next's low-level API) against a real `systemd --user` on a private bus:
 * the calls made in one tick go out in one writev(2) (dbus-next alone writes each message
 * separately, which was the largest single cost of a cleanup), the answers still reach their
 * calls, D-Bus errors keep their names, a call's answer is not kept once it returned, and a call
 * still waiting when the connection is lost fails with the loss.
 */
import * as net from 'net';
import * as v8 from 'v8';
import * as vm from 'vm';
import { BusLostError, dbusErrorName, SystemdManager, UNIT_IFACE, unitObjectPath } from '../../src/agent/systemd-dbus';
import { startUserSystemd, UserSystemd } from './harness/systemd-user';

jest.setTimeout(60_000);

let sd: UserSystemd;
let mgr: SystemdManager;

beforeAll(async () => {
  sd = await startUserSystemd();
  mgr = await SystemdManager.connect({ session: true, address: sd.busAddress });
});

afterAll(async () => {
  mgr?.close();
  await sd?.stop();
});

/** What the process's sockets are asked to write while `work` runs: calls of _write (one chunk) and of _writev (several). */
async function socketWrites(work: () => Promise<unknown>): Promise<{ single: number; batched: number[] }> {
  const single = jest.spyOn(net.Socket.prototype as unknown as { _write: () => void }, '_write');
  const batched = jest.spyOn(net.Socket.prototype as unknown as { _writev: (chunks: unknown[]) => void }, '_writev');
  try {
    await work();
    return { single: single.mock.calls.length, batched: batched.mock.calls.map((c) => (c[0] as unknown[]).length) };
  } finally {
    single.mockRestore();
    batched.mockRestore();
  }
}

describe('SystemdManager on dbus-next', () => {
  it('sends the calls of one tick in one write, and every answer reaches its call', async () => {
    const names = Array.from({ length: 40 }, (_, i) => `batch-${i}.service`);
    let paths: string[] = [];
    const writes = await socketWrites(async () => {
      paths = await Promise.all(names.map((n) => mgr.LoadUnit(n)));
    });
    expect(writes).toEqual({ single: 0, batched: [40] });
    expect(paths).toEqual(names.map(unitObjectPath));
    // Each answer is its own call's: the unit's Id property names it.
    const ids = await Promise.all(paths.map((p) => mgr.getProperty(p, UNIT_IFACE, 'Id')));
    expect(ids).toEqual(names);
  });

  it('writes each call of consecutive ticks on its own, so nothing waits for a later call', async () => {
    const writes = await socketWrites(async () => {
      for (const n of ['one.service', 'two.service', 'three.service']) expect(await mgr.LoadUnit(n)).toBe(unitObjectPath(n));
    });
    expect(writes.single + writes.batched.length).toBe(3);
  });

  it("keeps a D-Bus error's name (the cleanup tells a unit that is gone from a failure by it)", async () => {
    const e = await mgr.ResetFailedUnit('never-loaded-anywhere.service').then(() => undefined, (err: unknown) => err);
    expect(dbusErrorName(e)).toBe('org.freedesktop.systemd1.NoSuchUnit');
  });

  it('keeps nothing of an answer once its call returned (issue 36: each call held its reply for the life of the connection)', async () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const path = await mgr.LoadUnit('kept.service');
    // Names (`as`) is the reply's own array, so a kept reply keeps it
    const refs: Array<WeakRef<object>> = [];
    for (let i = 0; i < 20; i++) refs.push(new WeakRef((await mgr.getProperty(path, UNIT_IFACE, 'Names')) as object));
    expect(refs[0].deref()).toEqual(['kept.service']);
    await new Promise((r) => setImmediate(r)); // a WeakRef holds its target until the job that made it ends
    gc();
    expect(refs.filter((r) => r.deref() !== undefined)).toHaveLength(0);
  });

  it('fails a call still waiting for its answer with the loss when the connection ends', async () => {
    const other = await SystemdManager.connect({ session: true, address: sd.busAddress, callTimeoutMs: 30_000 });
    const started = Date.now();
    const call = other.LoadUnit('never-answered.service');
    // the socket ends before the corked call is written: no answer can come
    (other as unknown as { stream: net.Socket }).stream.destroy();
    await expect(call).rejects.toBeInstanceOf(BusLostError);
    expect(Date.now() - started).toBeLessThan(5_000);
    await expect(other.lost).resolves.toBeInstanceOf(BusLostError);
    other.close();
  });
});
