import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { type JobConfig, loadConfig } from '../../src/config/load-config.js';
import type { Simulator } from '../../src/simulator/index.js';
import { send } from './http.js';
import { type ScriptedRequest, type ScriptedResponse, type ScriptedServer, startScriptedServer } from './scripted-server.js';

export interface ProxiedJob {
  config: JobConfig;
  out: string;
  proxy: ScriptedServer;
  /** Closes the proxy and deletes the job's folder (not the simulator). */
  close(): Promise<void>;
}

/** The path (and query) of a request to a scripted proxy, relative to its base URL: `/events?limit=10`. */
export function proxiedPath(request: ScriptedRequest): string {
  return request.url.replace('/api/v1/projects/scripted', '');
}

/**
 * A request a scripted proxy received, sent on to `sim` as it came (method, path and query, JSON
 * body) with `headers` (the credential); the simulator's answer, for the proxy to send back or alter.
 */
export async function passOn(
  sim: Simulator,
  request: ScriptedRequest,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  const post = request.method === 'POST';
  const reply = await send(`${sim.baseUrl}${proxiedPath(request)}`, {
    method: post ? 'POST' : 'GET',
    headers: { ...headers, ...(post ? { 'content-type': 'application/json' } : {}) },
    ...(post ? { body: request.body } : {}),
  });
  return { status: reply.status, body: reply.text };
}

/**
 * A job whose platform is a scripted proxy in front of `sim`: `answer` may replace the answer to
 * any request (`path` is relative to the base URL); undefined passes it on to the simulator with
 * the API key, so a test breaks exactly the answers it is about.
 */
export async function proxiedJob(options: {
  sim: Simulator;
  key: string;
  answer: (request: ScriptedRequest, path: string) => ScriptedResponse | undefined;
  /** Changes the body of an answer passed on from the simulator (its text), e.g. to add properties to a view. */
  alter?: (path: string, body: string) => string;
  streams: Record<string, unknown>[];
  output: Record<string, unknown>;
}): Promise<ProxiedJob> {
  const { sim, key } = options;
  const proxy = await startScriptedServer(async (request) => {
    const replaced = options.answer(request, proxiedPath(request));
    if (replaced !== undefined) return replaced;
    const passed = await passOn(sim, request, { 'api-key': key });
    return options.alter === undefined ? passed : { ...passed, body: options.alter(proxiedPath(request), passed.body) };
  });
  const dir = mkdtempSync(join(tmpdir(), 'bulk-extract-proxied-'));
  const out = join(dir, 'out');
  writeFileSync(
    join(dir, 'job.yaml'),
    stringify({
      source: { baseUrl: proxy.baseUrl, auth: { type: 'api-key', apiKey: '${K}' } },
      streams: options.streams,
      output: { dir: out, ...options.output },
    }),
  );
  return {
    config: loadConfig(join(dir, 'job.yaml'), { K: key }),
    out,
    proxy,
    close: async () => {
      await proxy.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
