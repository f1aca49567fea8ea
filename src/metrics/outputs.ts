import { rename, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { dirname } from 'node:path';
import type { AddressInfo } from 'node:net';
import { Pushgateway } from 'prom-client';
import type { Logger } from '../log.js';
import { createExclusive } from '../util/durable-file.js';
import { createMissingFolders } from '../util/missing-folders.js';
import type { RunMetrics } from './run-metrics.js';

/** One place the metrics go. `publish` never rejects: a failure is logged, the export goes on. */
export interface MetricsOutput {
  readonly name: string;
  /** Writes or pushes the metrics now (the endpoint is scraped instead: it does nothing). */
  publish(): Promise<void>;
  close(): Promise<void>;
}

/** Logs a failing output once, and again only when its error changes or after it worked again. */
class Complaints {
  private last: string | undefined;

  constructor(
    private readonly logger: Logger,
    private readonly what: string,
  ) {}

  failed(error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    if (message !== this.last) this.logger.warn({ err: message }, `metrics: ${this.what} failed (the export goes on): ${message}`);
    else this.logger.debug({ err: message }, `metrics: ${this.what} failed again`);
    this.last = message;
  }

  worked(): void {
    if (this.last !== undefined) this.logger.info(`metrics: ${this.what} works again`);
    this.last = undefined;
  }
}

/**
 * A file for node_exporter's textfile collector, replaced atomically (written beside it, then
 * renamed), so the collector never reads half a file. A folder of its path that does not exist is
 * created first (createMissingFolders: only the missing part, mode 0755, never through a link).
 */
export function textfileOutput(path: string, metrics: RunMetrics, logger: Logger): MetricsOutput {
  const complaints = new Complaints(logger, `writing ${path}`);
  const temporary = `${path}.${process.pid}.tmp`;
  return {
    name: 'textfile',
    async publish() {
      try {
        for (const folder of await createMissingFolders(dirname(path))) {
          logger.info({ folder }, `metrics: created the textfile's folder ${folder} (mode 0755)`);
        }
        const text = await metrics.merged().metrics();
        // Created anew, never through a link left at the temporary name.
        const file = await createExclusive(temporary);
        try {
          await file.writeFile(text);
        } finally {
          await file.close();
        }
        await rename(temporary, path);
        complaints.worked();
      } catch (error) {
        await rm(temporary, { force: true }).catch(() => {});
        complaints.failed(error);
      }
    },
    close: async () => {},
  };
}

/**
 * Pushes to a Pushgateway: the run-wide metrics under `job=<export>`, each stream's under
 * `job=<export>/stream=<name>`, both with `shard` (its index I) first for a worker of a split job so
 * that the workers do not overwrite each other. A push adds to (POST), not replaces, the group, so
 * that a run that never succeeded leaves the last success pushed by an earlier one in place.
 */
export function pushgatewayOutput(
  url: string,
  metrics: RunMetrics,
  logger: Logger,
  shard?: string,
  timeoutMs = 10_000,
): MetricsOutput {
  const complaints = new Complaints(logger, `pushing to ${url}`);
  const base: Record<string, string> = shard === undefined ? {} : { shard };
  const groups = [
    { registry: metrics.job, groupings: base },
    ...[...metrics.streams].map(([stream, registry]) => ({ registry, groupings: { ...base, stream } })),
  ];
  const jobName = metrics.exportLabel;
  let pushing: Promise<void> | undefined;
  const push = async () => {
    try {
      for (const { registry, groupings } of groups) {
        const gateway = new Pushgateway(url, { timeout: timeoutMs }, registry);
        await gateway.pushAdd(Object.keys(groupings).length === 0 ? { jobName } : { jobName, groupings });
      }
      complaints.worked();
    } catch (error) {
      complaints.failed(error);
    }
  };
  return {
    name: 'pushgateway',
    async publish() {
      // One push at a time: a slow gateway delays the next, it does not pile them up.
      while (pushing !== undefined) await pushing;
      pushing = push().finally(() => {
        pushing = undefined;
      });
      await pushing;
    },
    close: async () => {
      await pushing;
    },
  };
}

/** `GET /metrics` on `host:port` while the run lasts, for a Prometheus that scrapes the pod. */
export async function endpointOutput(
  host: string,
  port: number,
  metrics: RunMetrics,
  logger: Logger,
): Promise<MetricsOutput> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: metrics are at /metrics\n');
      return;
    }
    const registry = metrics.merged();
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(req.method === 'HEAD' ? undefined : text),
      (error: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${String(error)}\n`),
    );
  });
  const listening = await new Promise<boolean>((resolve) => {
    server.once('error', (error) => {
      logger.warn({ err: error.message }, `metrics: cannot serve /metrics on ${host}:${port} (the export goes on): ${error.message}`);
      resolve(false);
    });
    server.listen(port, host, () => resolve(true));
  });
  if (listening) {
    const { address, port: bound } = server.address() as AddressInfo;
    logger.info({ host: address, port: bound }, `metrics: serving http://${host}:${bound}/metrics while the run lasts`);
  }
  return {
    name: 'endpoint',
    publish: async () => {},
    close: () =>
      new Promise((resolve) => {
        if (!listening) return resolve();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
