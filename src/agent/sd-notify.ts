/**
 * sd_notify(3) READY=1 for `Type=notify`: Node cannot send on a datagram unix socket, so the
 * message goes through `systemd-notify`, which waits until the manager has read it (a barrier,
 * systemd ≥ 246), so it cannot be lost to the sender exiting first. The agent's unit has
 * `NotifyAccess=all`, since systemd-notify is a child and not the main process.
 */
import { execFile } from 'child_process';

/** Tells the service manager the agent is ready; a no-op outside a notify service. Rejects with why it failed. */
export function notifyReady(status: string, env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  if (!env.NOTIFY_SOCKET) return Promise.resolve(false);
  return new Promise((resolve, reject) => {
    execFile('systemd-notify', ['--ready', `--status=${status}`], { env, timeout: 10_000 }, (err, _out, stderr) => {
      if (err) reject(new Error(`systemd-notify --ready: ${stderr.trim() || err.message}`));
      else resolve(true);
    });
  });
}
