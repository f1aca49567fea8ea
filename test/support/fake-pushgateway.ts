import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a fake Pushgateway received. */
export interface PushRequest {
  method: string;
  /** The path, e.g. `/metrics/job/nightly/shard/1`. */
  path: string;
  body: string;
}

export interface FakePushgateway {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** Every request so far, in order. */
  readonly requests: PushRequest[];
  close(): Promise<void>;
}

/**
 * A Pushgateway on loopback that records what it is sent and answers 200, for tests of what a
 * run pushes (method, group, metric families) without the real one.
 */
export async function startFakePushgateway(): Promise<FakePushgateway> {
  const requests: PushRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests.push({ method: req.method ?? '', path: req.url ?? '', body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The metric families (names of `# TYPE` lines) in a pushed body. */
export function familiesOf(body: string): string[] {
  return [...body.matchAll(/^# TYPE (\S+) /gm)].map((match) => match[1] ?? '');
}
