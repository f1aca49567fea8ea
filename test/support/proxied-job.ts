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

/**
 * A job whose platform is a scripted proxy in front of `sim`: `answer` may replace the answer to
 * any request (`path` is relative to the base URL); undefined passes a GET on to the simulator
 * with the API key, so a test breaks exactly the answers it is about.
 */
export async function proxiedJob(options: {
  sim: Simulator;
  key: string;
  answer: (request: ScriptedRequest, path: string) => ScriptedResponse | undefined;
  streams: Record<string, unknown>[];
  output: Record<string, unknown>;
}): Promise<ProxiedJob> {
  const { sim, key } = options;
  const proxy = await startScriptedServer(async (request) => {
    const path = request.url.replace('/api/v1/projects/scripted', '');
    const replaced = options.answer(request, path);
    if (replaced !== undefined) return replaced;
    const reply = await send(`${sim.baseUrl}${path}`, { headers: { 'api-key': key } });
    return { status: reply.status, body: reply.text };
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
