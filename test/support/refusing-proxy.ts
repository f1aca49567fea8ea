import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';

/**
 * A proxy on loopback in front of the simulator that passes every request on but those of one
 * route of the platform's API, which it answers with the platform's 400: a platform that refuses
 * one question (an older deployment without the route, or a body it does not take).
 */
export interface RefusingProxy {
  /** `http://127.0.0.1:PORT/api/v1/projects/<project>`: the simulator's base URL, through the proxy. */
  baseUrl: string;
  /** The requests refused so far. */
  refused(): number;
  close(): Promise<void>;
}

export async function refusingProxy(target: string, route: string): Promise<RefusingProxy> {
  const url = new URL(target);
  if (url.hostname !== '127.0.0.1') throw new Error(`the proxy only talks to loopback, not ${url.hostname}`);
  let refused = 0;
  const server = createServer((req, res) => {
    void forward(req, res).catch((error: unknown) => {
      res.destroy(error instanceof Error ? error : new Error(String(error)));
    });
  });

  async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
    const path = (req.url ?? '').replace(/^\/api\/v1\/projects\/[^/]+/, '').split('?')[0] ?? '';
    if (path === route) {
      refused++;
      const text = JSON.stringify({ error: { code: 400, message: `Refused by the test's proxy: ${route}` } });
      res.writeHead(400, { 'content-type': 'application/json', 'x-request-id': `refused-${refused}` });
      res.end(text);
      return;
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined || ['host', 'connection', 'content-length'].includes(name)) continue;
      headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    const method = req.method === 'POST' ? 'POST' : 'GET';
    const answer = await request(`${url.origin}${req.url ?? '/'}`, {
      method,
      headers,
      ...(method === 'POST' ? { body: Buffer.concat(chunks) } : {}),
    });
    const bytes = Buffer.from(await answer.body.arrayBuffer());
    const out: Record<string, string> = { 'content-length': String(bytes.length) };
    for (const name of ['content-type', 'content-encoding', 'x-request-id']) {
      const value = answer.headers[name];
      if (typeof value === 'string') out[name] = value;
    }
    res.writeHead(answer.statusCode, out);
    res.end(bytes);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}${url.pathname}`,
    refused: () => refused,
    close: () => new Promise<void>((resolve, reject) => {
      server.closeAllConnections();
      server.close((error) => (error === undefined ? resolve() : reject(error)));
    }),
  };
}
