import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { RESUME_HINT } from '../../src/cli/exit-codes.js';
import { describeExit, spawnCli, tempDir } from '../support/resume-harness.js';
import { type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';

/**
 * A run stopped (SIGTERM, Ctrl-C) while it is still asking the platform its first questions (the
 * counts) is interrupted, exit 130, as one stopped later: a scheduler retries it as such, and a
 * user reads that the same command goes on. It read nothing, and the output folder is not made yet.
 */
const KEY = 'interrupted-start-key';
const servers: ScriptedServer[] = [];

afterAll(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

describe('a run stopped while it counts its streams', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)('%s: exit 130, the output folder not made', async (signal) => {
    let asked: () => void = () => {};
    const counting = new Promise<void>((resolve) => (asked = resolve));
    // The count is never answered: the run is stopped while it waits for it.
    const server = await startScriptedServer((request) => {
      if (request.url.endsWith('/events/aggregate')) asked();
      return { hold: true };
    });
    servers.push(server);
    const dir = tempDir('interrupted-start');
    const out = join(dir, 'out');
    const file = join(dir, 'job.yaml');
    writeFileSync(
      file,
      stringify({
        source: { baseUrl: server.baseUrl, auth: { type: 'api-key', apiKey: '${K}' } },
        streams: [{ resource: 'events', partitions: 2 }],
        output: { dir: out },
      }),
    );
    const cli = spawnCli(['run', '--config', file], { cwd: dir, env: { K: KEY } });
    await counting;
    cli.child.kill(signal);
    const exit = await cli.done;
    expect(exit.code, describeExit(exit)).toBe(130);
    expect(exit.stderr).toContain(`"signal":"${signal}"`);
    expect(exit.stderr).toContain('Stopped before the answer arrived (POST /api/v1/projects/scripted/events/aggregate');
    // Its last line says what to do, as the summary of a run stopped later does.
    expect(exit.stderr.trimEnd().split('\n').at(-1)).toBe(RESUME_HINT);
    // The counts come before the output folder is touched.
    expect(existsSync(out)).toBe(false);
  });
});
