import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptedRequest {
  method: string;
  /** Path and query, e.g. `/api/v1/projects/p/events?limit=10`. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface ScriptedResponse {
  status?: number;
  headers?: Record<string, string>;
  /** A string is sent as is; anything else is sent as JSON. */
  body?: unknown;
  /** Never answer (to test timeouts); the socket is closed when the server closes. */
  hold?: boolean;
  /** Send the headers and this many bytes of the body, then destroy the connection. */
  resetAfterBytes?: number;
  /**
   * Write the answer yourself (binary, endless or trickling bodies): status, headers and body above
   * are then ignored. The response may be destroyed by the client at any time.
   */
  write?: (res: ServerResponse) => void;
}

export interface ScriptedServer {
  /** `http://127.0.0.1:PORT` */
  origin: string;
  /** `http://127.0.0.1:PORT/api/v1/projects/scripted` */
  baseUrl: string;
  requests: ScriptedRequest[];
  close(): Promise<void>;
}

/**
 * A real HTTP server on loopback that answers what the test scripts: for responses the simulator
 * never gives (wrong shapes, cursor loops, redirects, held requests) and to see request headers.
 */
export async function startScriptedServer(
  respond: (request: ScriptedRequest, index: number) => ScriptedResponse | Promise<ScriptedResponse>,
): Promise<ScriptedServer> {
  const requests: ScriptedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request: ScriptedRequest = {
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(request);
      void Promise.resolve(respond(request, requests.length - 1)).then((answer) => {
        if (answer.hold) return;
        if (answer.write !== undefined) {
          res.on('error', () => {});
          answer.write(res);
          return;
        }
        const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body ?? {});
        const bytes = Buffer.from(text);
        res.writeHead(answer.status ?? 200, {
          'content-type': 'application/json',
          'content-length': String(bytes.length),
          'x-request-id': `scripted-${requests.length}`,
          ...answer.headers,
        });
        if (answer.resetAfterBytes !== undefined) {
          res.write(bytes.subarray(0, answer.resetAfterBytes), () => res.destroy());
        } else {
          res.end(bytes);
        }
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    baseUrl: `${origin}/api/v1/projects/scripted`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
