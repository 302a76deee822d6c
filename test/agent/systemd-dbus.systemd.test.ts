/**
 * SystemdManager (dbus-next's low-level API) against a real `systemd --user` on a private bus:
 * the calls made in one tick go out in one writev(2) (dbus-next alone writes each message
 * separately, which was the largest single cost of a cleanup), the answers still reach their
 * calls, and D-Bus errors keep their names.
 */
import * as net from 'net';
import { dbusErrorName, SystemdManager, UNIT_IFACE, unitObjectPath } from '../../src/agent/systemd-dbus';
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
});
