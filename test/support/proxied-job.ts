import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { type JobConfig, loadConfig } from '../../src/config/load-config.js';
import type { Simulator } from '../../src/simulator/index.js';
import { type Reply, send } from './http.js';
import { type ScriptedRequest, type ScriptedResponse, type ScriptedServer, startScriptedServer } from './scripted-server.js';

export interface ProxiedJob {
  config: JobConfig;
  /** The job file (its API key is `${K}`), and the folder that holds it and the output. */
  file: string;
  dir: string;
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
  const reply = await sendOn(sim, request, headers);
  return { status: reply.status, body: reply.text };
}

/** passOn's request, to `path` with `body` when given, and the simulator's whole reply. */
function sendOn(
  sim: Simulator,
  request: ScriptedRequest,
  headers: Record<string, string>,
  path = proxiedPath(request),
  body = request.body,
): Promise<Reply> {
  const post = request.method === 'POST';
  return send(`${sim.baseUrl}${path}`, {
    method: post ? 'POST' : 'GET',
    headers: { ...headers, ...(post ? { 'content-type': 'application/json' } : {}) },
    ...(post ? { body } : {}),
  });
}

/** What a proxied job's platform answers (proxiedJob): undefined passes the request on. */
export type ProxiedAnswer = (
  request: ScriptedRequest,
  path: string,
  forward: (path?: string, body?: string) => Promise<Reply>,
) => ScriptedResponse | undefined | Promise<ScriptedResponse | undefined>;

/**
 * A job whose platform is a scripted proxy in front of `sim`: `answer` may replace the answer to
 * any request (`path` is relative to the base URL); undefined passes the request (its method and
 * body) on to the simulator with the API key, so a test breaks exactly the answers it is about.
 * `forward` passes a request on and gives the simulator's reply, for an answer that changes it.
 */
export async function proxiedJob(options: {
  sim: Simulator;
  key: string;
  answer: ProxiedAnswer;
  /** Changes the body of an answer passed on from the simulator (its text), e.g. to add properties to a view. */
  alter?: (path: string, body: string) => string;
  streams: Record<string, unknown>[];
  output: Record<string, unknown>;
  /** More keys of the job's `source` (retry, timeouts, concurrency). */
  source?: Record<string, unknown>;
}): Promise<ProxiedJob> {
  const { sim, key } = options;
  const proxy = await startScriptedServer(async (request) => {
    const path = proxiedPath(request);
    const forward = (to = path, body = request.body) => sendOn(sim, request, { 'api-key': key }, to, body);
    const replaced = await options.answer(request, path, forward);
    if (replaced !== undefined) return replaced;
    const reply = await forward();
    return { status: reply.status, body: options.alter === undefined ? reply.text : options.alter(path, reply.text) };
  });
  const dir = mkdtempSync(join(tmpdir(), 'bulk-extract-proxied-'));
  const out = join(dir, 'out');
  const file = join(dir, 'job.yaml');
  writeFileSync(
    file,
    stringify({
      source: { baseUrl: proxy.baseUrl, auth: { type: 'api-key', apiKey: '${K}' }, ...options.source },
      streams: options.streams,
      output: { dir: out, ...options.output },
    }),
  );
  return {
    config: loadConfig(file, { K: key }),
    file,
    dir,
    out,
    proxy,
    close: async () => {
      await proxy.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
