/**
 * The simulator's pod exec (`/api/v1/namespaces/<ns>/pods/<pod>/exec`), as a kubelet answers it
 * through the API server: a WebSocket upgrade with the `v4.channel.k8s.io` subprotocol, then
 * binary frames whose first byte is the channel (1 stdout, 2 stderr, 3 status as a Status JSON),
 * then close. What the command prints is scripted per call; a pod that is not Running is refused
 * before the upgrade, as the API server does (400 "container not running"), a missing one 404.
 */
import type { IncomingMessage, Server } from 'http';
import type { Duplex } from 'stream';
import { WebSocketServer } from 'ws';

export interface ExecCall {
  readonly namespace: string;
  readonly pod: string;
  readonly container: string;
  readonly command: readonly string[];
}

export interface ExecResult {
  readonly stdout?: string | Buffer;
  readonly stderr?: string;
  /** @default 0 */
  readonly exitCode?: number;
}

export type ExecScript = (call: ExecCall) => ExecResult;

const CHANNEL = { stdout: 1, stderr: 2, status: 3 } as const;
const CHUNK = 64 * 1024;

function refuse(socket: Duplex, code: number, message: string): void {
  const body = JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message, code });
  socket.end(`HTTP/1.1 ${code} ${code === 404 ? 'Not Found' : 'Bad Request'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
}

/** Answers exec upgrades on `server`; `pod` reads a pod from the store; `calls` records each exec. */
export function attachExec(server: Server, pod: (namespace: string, name: string) => any, script: () => ExecScript | undefined, calls: ExecCall[]): void {
  const wss = new WebSocketServer({ noServer: true, handleProtocols: (offered) => (offered.has('v4.channel.k8s.io') ? 'v4.channel.k8s.io' : false) });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://sim');
    const m = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/exec$/.exec(url.pathname);
    if (!m) return refuse(socket, 404, `no WebSocket endpoint at ${url.pathname}`);
    const [, namespace, name] = m;
    const p = pod(namespace, name);
    if (!p) return refuse(socket, 404, `pods "${name}" not found`);
    const container = url.searchParams.get('container') ?? p.spec?.containers?.[0]?.name;
    const running = (p.status?.containerStatuses ?? []).some((cs: any) => cs.name === container && cs.state?.running);
    if (!running) return refuse(socket, 400, `container ${container} is not running`);
    const call: ExecCall = { namespace, pod: name, container, command: url.searchParams.getAll('command') };
    calls.push(call);
    const answer = script()?.(call) ?? { stderr: `sim: no exec script for ${call.command.join(' ')}\n`, exitCode: 126 };
    wss.handleUpgrade(req, socket, head, (ws) => {
      const send = (channel: number, data: Buffer) => {
        for (let i = 0; i < data.length; i += CHUNK) ws.send(Buffer.concat([Buffer.from([channel]), data.subarray(i, i + CHUNK)]));
      };
      send(CHANNEL.stdout, Buffer.from(answer.stdout ?? ''));
      send(CHANNEL.stderr, Buffer.from(answer.stderr ?? ''));
      const code = answer.exitCode ?? 0;
      const status = code === 0
        ? { metadata: {}, status: 'Success' }
        : { metadata: {}, status: 'Failure', message: `command terminated with non-zero exit code: exit status ${code}`, reason: 'NonZeroExitCode', details: { causes: [{ reason: 'ExitCode', message: String(code) }] } };
      send(CHANNEL.status, Buffer.from(JSON.stringify(status)));
      ws.close(1000);
    });
  });
}
