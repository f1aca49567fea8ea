import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { BlobServiceClient, StorageSharedKeyCredential } from '@azure/storage-blob';
import { afterAll } from 'vitest';
import { tempDir } from './resume-harness.js';

/**
 * Microsoft's Azurite (the npm package `azurite`) on loopback for tests: the Blob service in
 * memory, a port of its own, started and stopped by the test file like the simulator. Its one
 * account is the published development account, devstoreaccount1, with its published key (no
 * secret: every Azurite has it).
 */

export const AZURITE_ACCOUNT = 'devstoreaccount1';
export const AZURITE_KEY = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';

export interface Azurite {
  /** The Blob service of the account: http://127.0.0.1:PORT/devstoreaccount1 */
  endpoint: string;
  /** The environment a process uses to reach it with the account key. */
  env: Record<string, string>;
  /** A client of the account, for a test's own setup and checks. */
  service: BlobServiceClient;
  /** Creates the container (fine when it exists). */
  container(name: string): Promise<void>;
  close(): Promise<void>;
}

const BIN = fileURLToPath(new URL('../../node_modules/azurite/dist/src/blob/main.js', import.meta.url));
const running = new Set<{ close(): Promise<void> }>();
afterAll(async () => {
  await Promise.all([...running].map((server) => server.close()));
});

/** Starts Azurite's Blob service on 127.0.0.1 (a free port it picks), in memory. */
export async function startAzurite(): Promise<Azurite> {
  const child = spawn(
    process.execPath,
    [BIN, '--blobHost', '127.0.0.1', '--blobPort', '0', '--inMemoryPersistence', '--skipApiVersionCheck', '--silent', '--disableTelemetry'],
    { cwd: tempDir('azurite'), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const port = await listeningPort(child);
  const endpoint = `http://127.0.0.1:${port}/${AZURITE_ACCOUNT}`;
  const service = new BlobServiceClient(endpoint, new StorageSharedKeyCredential(AZURITE_ACCOUNT, AZURITE_KEY));
  let closed: Promise<void> | undefined;
  const azurite: Azurite = {
    endpoint,
    env: { AZURE_STORAGE_KEY: AZURITE_KEY },
    service,
    async container(name) {
      await service.getContainerClient(name).createIfNotExists();
    },
    close() {
      closed ??= (async () => {
        running.delete(azurite);
        if (child.exitCode === null && child.signalCode === null) {
          child.kill('SIGTERM');
          await once(child, 'exit');
        }
      })();
      return closed;
    },
  };
  running.add(azurite);
  return azurite;
}

/** The port Azurite says it listens on (it prints it once ready), or its exit as an error. */
async function listeningPort(child: ChildProcess): Promise<number> {
  let output = '';
  return new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Azurite did not start within 20 s: ${output}`)), 20_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const port = /successfully listens on http:\/\/127\.0\.0\.1:(\d+)/.exec(output)?.[1];
      if (port !== undefined) {
        clearTimeout(timer);
        resolve(Number(port));
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`Azurite exited (${code}) before it listened: ${output}`));
    });
  });
}

/** A request the proxy saw: its method, blob path (after the account) and `comp` query. */
export interface SeenRequest {
  method: string;
  path: string;
  comp: string | undefined;
  /** The status answered: the injected fault's, or Azurite's. */
  status: number;
}

export interface AzureProxy {
  /** The Blob service through the proxy: http://127.0.0.1:PORT/devstoreaccount1 */
  endpoint: string;
  requests(): SeenRequest[];
  /** Answers the next `count` requests `match` accepts with `status` and the Azure error `code`, not forwarded. */
  failNext(match: (request: Omit<SeenRequest, 'status'>) => boolean, status: number, code: string, count?: number): void;
  /** Forwards the next request `match` accepts; of its answer sends the headers and `bytes` of the body, then stops. */
  stallNext(match: (request: Omit<SeenRequest, 'status'>) => boolean, bytes: number): void;
  close(): Promise<void>;
}

/**
 * A loopback proxy in front of Azurite that can answer requests with faults as Azure sends them
 * (503 ServerBusy, 500 OperationTimedOut: an XML error body and the x-ms-error-code header), the
 * body of the request read first, as a server that refuses it would.
 */
export async function startAzureProxy(azurite: Azurite): Promise<AzureProxy> {
  const target = new URL(azurite.endpoint);
  const seen: SeenRequest[] = [];
  const faults: { match: (request: Omit<SeenRequest, 'status'>) => boolean; status: number; code: string; left: number }[] = [];
  const stalls: { match: (request: Omit<SeenRequest, 'status'>) => boolean; bytes: number; left: number }[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://proxy');
    const request = {
      method: req.method ?? 'GET',
      path: decodeURIComponent(url.pathname.replace(`/${AZURITE_ACCOUNT}`, '')),
      comp: url.searchParams.get('comp') ?? undefined,
    };
    const fault = faults.find((entry) => entry.left > 0 && entry.match(request));
    if (fault !== undefined) {
      fault.left--;
      req.resume();
      req.once('end', () => {
        const body = `<?xml version="1.0" encoding="utf-8"?><Error><Code>${fault.code}</Code><Message>Injected by the test.\nRequestId:00000000-0000-0000-0000-000000000000</Message></Error>`;
        res.writeHead(fault.status, { 'content-type': 'application/xml', 'x-ms-error-code': fault.code, 'content-length': Buffer.byteLength(body) });
        res.end(req.method === 'HEAD' ? undefined : body);
        seen.push({ ...request, status: fault.status });
      });
      return;
    }
    const forward = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: target.host },
      },
      (answer: IncomingMessage) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        const stall = stalls.find((entry) => entry.left > 0 && entry.match(request));
        if (stall === undefined) {
          answer.pipe(res);
        } else {
          stall.left--;
          // The first bytes of the body, then silence with the connection open.
          let sent = 0;
          answer.on('data', (chunk: Buffer) => {
            if (sent < stall.bytes) res.write(chunk.subarray(0, stall.bytes - sent));
            sent += chunk.length;
          });
        }
        seen.push({ ...request, status: answer.statusCode ?? 0 });
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  let closed: Promise<void> | undefined;
  const proxy: AzureProxy = {
    endpoint: `http://127.0.0.1:${port}/${AZURITE_ACCOUNT}`,
    requests: () => [...seen],
    failNext: (match, status, code, count = 1) => faults.push({ match, status, code, left: count }),
    stallNext: (match, bytes) => stalls.push({ match, bytes, left: 1 }),
    close() {
      closed ??= (async () => {
        running.delete(proxy);
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      })();
      return closed;
    },
  };
  running.add(proxy);
  return proxy;
}
