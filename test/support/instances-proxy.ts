import type { Simulator } from '../../src/simulator/index.js';
import { SIM_KEY } from './export-harness.js';
import { send } from './http.js';
import { type ScriptedResponse, type ScriptedServer, startScriptedServer } from './scripted-server.js';

/** A request's JSON body, as the proxy gives it to the test. */
export type Body = Record<string, unknown>;

/**
 * A proxy in front of `sim` (its base URL ends `/api/v1/projects/scripted`; close it when done):
 * `answer` may answer a request itself (`path` relative to the base URL, `body` the request's
 * JSON); else the request goes on to the simulator with its method and its body (first passed
 * through `rewrite`), authenticated with SIM_KEY, and the simulator's answer comes back as it is.
 */
export function instancesProxy(
  sim: Simulator,
  options: {
    rewrite?: (path: string, body: Body) => Body;
    answer?: (path: string, body: Body) => Promise<ScriptedResponse | undefined> | ScriptedResponse | undefined;
  },
): Promise<ScriptedServer> {
  return startScriptedServer(async (request) => {
    const path = request.url.replace('/api/v1/projects/scripted', '');
    const body = (request.body === '' ? {} : JSON.parse(request.body)) as Body;
    const answered = await options.answer?.(path, body);
    if (answered !== undefined) return answered;
    const sent = options.rewrite?.(path, body) ?? body;
    const reply = await forward(sim, request.method === 'POST' ? 'POST' : 'GET', path, sent);
    return { status: reply.status, body: reply.text };
  });
}

/** The simulator's answer to `method path` with `body` (a POST's). */
export function forward(sim: Simulator, method: 'GET' | 'POST', path: string, body: Body): ReturnType<typeof send> {
  return send(`${sim.baseUrl}${path}`, {
    method,
    headers: { 'api-key': SIM_KEY, 'content-type': 'application/json' },
    ...(method === 'POST' ? { body: JSON.stringify(body) } : {}),
  });
}
