/**
 * A command run in a container through the pods/exec websocket (client-node's Exec), for
 * `support`'s supportconfig. A module of its own, not a method of Cluster: every verb loads
 * Cluster, and `status` runs from a bundle that must not carry the exec client and its websocket
 * (test/build/bundle.test.ts).
 */
import type { Writable } from 'stream';
import { Exec } from '@kubernetes/client-node';
import type { Cluster } from './cluster';

/**
 * Runs `command` in the container with its output into `stdout` and `stderr`: the API's status
 * when it ends (`Success`, else `Failure` with why; a connection closed before the command ended
 * is a failure too). Never rejects.
 */
export function execInContainer(
  cluster: Cluster, namespace: string, pod: string, container: string, command: string[], stdout: Writable, stderr: Writable,
): Promise<{ status?: string; message?: string }> {
  return new Promise<{ status?: string; message?: string }>((resolve, reject) => {
    new Exec(cluster.kc).exec(namespace, pod, container, command, stdout, stderr, null, false, resolve)
      .then((ws) => ws.on('close', () => resolve({ status: 'Failure', message: 'the connection closed before the command ended' })), reject);
  }).catch((e: Error) => ({ status: 'Failure', message: e.message }));
}
