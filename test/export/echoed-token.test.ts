import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { passOn, proxiedPath } from '../support/proxied-job.js';
import { describeExit, newSimulator, runCliWith, tempDir } from '../support/resume-harness.js';
import { startScriptedServer } from '../support/scripted-server.js';

const CLIENT = { id: 'echo-client', secret: 'echo-client-secret-0001' };

/** Every file under `dir`, recursively. */
function allFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? allFiles(path) : [path];
  });
}

/** The commands run after the run, `FILE` the job file and `OUT` its output folder; each obtains a token of its own. */
const COMMANDS = [
  'status --config FILE',
  'status --config FILE --json',
  'status --out OUT',
  'status --out OUT --json',
  'auth status --config FILE',
  'run --dry-run --config FILE',
];

/** What each text of `printed` is. */
const OUTPUTS = ['run --json', ...COMMANDS].flatMap((command) => [`${command}: stdout`, `${command}: stderr`]);

/** The three routes a server echoed the token on, each with a stream that meets it. */
const ROUTES = {
  'POST /timeseries/data/list': { resource: 'datapoints', name: 'points', partitions: 2, start: 0, end: Date.UTC(2026, 0, 1) },
  'POST /models/instances/sync': {
    resource: 'instances',
    name: 'assets',
    mode: 'incremental',
    view: { space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' },
  },
  'POST /models/views/byids': {
    resource: 'instances',
    name: 'assets',
    view: { space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' },
  },
} as const;

/**
 * A platform that quotes the request's Authorization header in its 400s (as some gateways do) never
 * puts an access token on the screen or into the output: the token the run obtained from the
 * identity provider, and the one it renewed mid-run, are hidden from the log (info level), `run
 * --json`, the run records, the checkpoint and manifest, and `status` (text and JSON); so is the
 * token `auth status` and `run --dry-run` each obtain. The server quotes them in the header's
 * form (`Bearer <token>`) and alone, so the generic Bearer rule cannot hide them by itself.
 */
describe.concurrent('an access token the server echoes is redacted everywhere', () => {
  it.each(Object.keys(ROUTES) as (keyof typeof ROUTES)[])('echoed by %s', async (route) => {
    const sim = await newSimulator({
      seed: 42,
      clients: [CLIENT],
      timeseries: 6,
      datapoints: 600,
      instances: { assets: 40, activities: 0, timeseries: 0, edges: 0 },
    });
    const seen: string[] = [];
    // While the run runs, every header seen is quoted (the run sent them all); afterwards each
    // command sees only its own: a process cannot know the tokens another one obtained.
    let running = true;
    // In front of the simulator: the first request is refused with a 401 (so the token is renewed
    // and a second one is used), `route` (and `GET /assets`) answers 400 quoting the Authorization
    // headers, and the tokens alone.
    const proxy = await startScriptedServer(async (request, index) => {
      const path = proxiedPath(request);
      const authorization = String(request.headers.authorization ?? '');
      if (!seen.includes(authorization)) seen.push(authorization);
      if (index === 0) return { status: 401, body: { error: { code: 401, message: 'Unauthorized' } } };
      const answered = `${request.method} ${path.split('?')[0]}`;
      // `auth status` asks for one asset (GET /assets): it meets the same echo.
      if (answered === route || answered === 'GET /assets') {
        const echoed = running ? seen : [authorization];
        const quoted = echoed.map((header) => `Authorization: ${header}`).join(', ');
        const bare = echoed.map((header) => header.replace(/^Bearer /, '')).join(', ');
        return { status: 400, body: { error: { code: 400, message: `Request headers not accepted (${quoted}; unknown tokens ${bare})` } } };
      }
      return passOn(sim, request, { authorization });
    });
    try {
      const dir = tempDir('echoed-token');
      const out = join(dir, 'out');
      const file = join(dir, 'job.yaml');
      writeFileSync(
        file,
        stringify({
          source: {
            baseUrl: proxy.baseUrl,
            auth: { type: 'oauth-client-credentials', tokenUrl: sim.tokenUrl, clientId: CLIENT.id, clientSecret: '${SECRET}' },
            retry: { baseDelayMs: 1, maxDelayMs: 5 },
          },
          streams: [ROUTES[route]],
          output: { dir: out, formats: ['parquet', 'ndjson'] },
        }),
      );
      const env = { SECRET: CLIENT.secret };
      const run = await runCliWith(['run', '--config', file, '--json'], { cwd: dir, env });
      expect(run.code, describeExit(run)).not.toBe(0);
      running = false;
      const tokens = () => seen.filter((header) => header.startsWith('Bearer ')).map((header) => header.slice('Bearer '.length));
      // Two tokens were used (the first refused with a 401, then renewed), and the 400 quoted both.
      expect(tokens()).toHaveLength(2);
      const printed = [run.stdout, run.stderr];
      for (const command of COMMANDS) {
        const args = command.split(' ').map((arg) => (arg === 'FILE' ? file : arg === 'OUT' ? out : arg));
        const exit = await runCliWith(args, { cwd: dir, env });
        printed.push(exit.stdout, exit.stderr);
      }
      // The view is read before the output folder is made: a run it refuses leaves none.
      const files = route === 'POST /models/views/byids' ? [] : allFiles(out);
      expect(existsSync(out)).toBe(files.length > 0);
      // Each command after the run obtained a token of its own: none of them shows either.
      expect(tokens().length).toBeGreaterThan(2);
      for (const [n, token] of tokens().entries()) {
        for (const [i, text] of printed.entries()) expect(text.includes(token), `token ${n + 1} in ${OUTPUTS[i]}`).toBe(false);
        const needle = Buffer.from(token);
        for (const path of files) expect(readFileSync(path).includes(needle), `token ${n + 1} in ${path}`).toBe(false);
      }
      // The message did reach them, the tokens hidden in it.
      const echoed =
        'Request headers not accepted (Authorization: Bearer [redacted], Authorization: Bearer [redacted]; unknown tokens [redacted], [redacted])';
      expect(run.stderr).toContain(echoed);
      expect(run.stdout).toContain(echoed);
      const records = files.filter((path) => path.includes('_runs') && readFileSync(path, 'utf8').includes(echoed));
      expect(records).toHaveLength(files.length === 0 ? 0 : 1);
    } finally {
      await proxy.close();
    }
  });
});
