import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Finished, runCli } from '../support/cli.js';
import { closedPort } from '../support/closed-port.js';
import { newJob, newSimulator, writeJob } from '../support/resume-harness.js';

/**
 * Hostile inputs through the built CLI: the value of a variable whose name
 * looks secret (MY_API_TOKEN), used in a key that reaches the run's messages, shows nowhere: not on
 * stderr (log lines and the error line), not on stdout (`run --json`, `--dry-run`), and in no file
 * of the output folder (the run records in _runs/ carry error messages).
 */
const KEY = 'secret-values-key-0001';
// A space and a plus, so that the percent-encoded forms differ from the value.
const VALUE = 'my-api-token value+0001';

/** The forms the value may take in a message: as is, percent-encoded, form-encoded, JSON-escaped. */
const FORMS = [
  VALUE,
  encodeURI(VALUE),
  encodeURIComponent(VALUE),
  new URLSearchParams([['', VALUE]]).toString().slice(1),
  JSON.stringify(VALUE).slice(1, -1),
];

function allFiles(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? allFiles(path) : [path];
  });
}

/** Where a form of the value shows: in what the CLI printed, or in a file of `out`. */
function leaks(outputs: Record<string, string>, out: string): string[] {
  const texts = { ...outputs, ...Object.fromEntries(allFiles(out).map((file) => [file, readFileSync(file, 'utf8')])) };
  return Object.entries(texts).flatMap(([where, text]) => FORMS.filter((form) => text.includes(form)).map((form) => `${form} in ${where}`));
}

function cli(args: string[]): Promise<Finished> {
  return runCli(args, { ...process.env, SIM_KEY: KEY, MY_API_TOKEN: VALUE });
}

describe('a secret-looking variable\'s value is redacted in every message of a run', () => {
  it('a filter value that makes a run refused (drift): the error line, --json, --dry-run, logs, _runs/', async () => {
    const sim = await newSimulator({ events: 300, assets: 10, seed: 25, apiKeys: [KEY] });
    const job = newJob(sim, [{ resource: 'events', partitions: 1, filter: { type: 'alarm' } }], {}, 'secret-values');
    const first = await cli(['run', '--config', job.file]);
    expect(first.code, first.stderr).toBe(0);

    // The same stream with another filter: the checkpoint does not match, the run is refused.
    writeJob(job.file, { ...job.spec, streams: [{ resource: 'events', partitions: 1, filter: { type: '${MY_API_TOKEN}' } }] });
    const refused = await cli(['run', '--config', job.file, '--json', '--log-level', 'debug']);
    const dry = await cli(['run', '--config', job.file, '--dry-run', '--log-level', 'debug']);
    const status = await cli(['status', '--config', job.file]);
    expect(refused.code, refused.stderr).toBe(2);
    expect(dry.code, dry.stderr).toBe(2);
    expect(refused.stderr).toContain("stream 'events': type =alarm in the checkpoint, =[redacted] in the config");
    expect(JSON.parse(refused.stdout)).toMatchObject({ state: 'refused', reason: { code: 'E_CHECKPOINT' } });
    expect(dry.stdout).toContain('[redacted]');
    const records = allFiles(join(job.out, '_runs'));
    expect(records).toHaveLength(2);
    const outputs = { 'run stdout': refused.stdout, 'run stderr': refused.stderr, 'dry-run stdout': dry.stdout, 'dry-run stderr': dry.stderr, 'status stdout': status.stdout, 'status stderr': status.stderr };
    expect(leaks(outputs, job.out)).toEqual([]);
  });

  it('a project name that reaches connection errors percent-encoded: run and auth status, the error line, --json and logs', async () => {
    const sim = await newSimulator({ events: 10, assets: 10, seed: 25, apiKeys: [KEY] });
    const port = await closedPort();
    const job = newJob(sim, [{ resource: 'events', partitions: 1 }], {
      baseUrl: `http://127.0.0.1:${port}/api/v1/projects/\${MY_API_TOKEN}`,
      // A token: auth status asks {baseUrl}/assets, a path with the project in it.
      auth: { type: 'token', token: '${SIM_KEY}' },
    }, 'secret-values');
    const run = await cli(['run', '--config', job.file, '--json', '--log-level', 'debug']);
    expect(run.code, run.stderr).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ reason: { code: 'E_NETWORK' } });
    expect(run.stderr).toContain('/api/v1/projects/[redacted]/');
    const auth = await cli(['auth', 'status', '--config', job.file, '--log-level', 'debug']);
    expect(auth.code, auth.stderr).toBe(1);
    expect(auth.stderr).toContain('/api/v1/projects/[redacted]/');
    const outputs = { 'run stdout': run.stdout, 'run stderr': run.stderr, 'auth stdout': auth.stdout, 'auth stderr': auth.stderr };
    expect(leaks(outputs, job.out)).toEqual([]);
  });
});
