/**
 * One HTTP request and its whole answer, with a deadline from connect to the last byte: what the
 * agent's pod list (pods.ts) and its API client (api.ts) both send. Rejects with the transport's
 * own words (refused, reset, timed out, cut off); the callers add where and judge the status.
 */
import * as http from 'http';
import * as https from 'https';

export interface Answer {
  readonly status: number;
  readonly body: string;
}

export function exchange(url: URL, options: https.RequestOptions, payload: Buffer | undefined, timeoutMs: number): Promise<Answer> {
  const lib = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const cutOff = (): void => {
      clearTimeout(timer);
      reject(new Error('the connection closed before the answer was complete'));
    };
    const req = lib.request(url, options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        if (!res.complete) return cutOff();
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
      });
      res.on('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
      res.on('aborted', cutOff);
    });
    const timer = setTimeout(() => req.destroy(new Error(`no complete answer within ${timeoutMs} ms`)), timeoutMs);
    req.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    req.end(payload);
  });
}
