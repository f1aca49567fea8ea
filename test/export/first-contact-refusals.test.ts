import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import {
  describeExit,
  type Exit,
  type JobSpec,
  newSimulator,
  runCliWith,
  type StreamSpec,
  tempDir,
  writeJob,
} from '../support/resume-harness.js';
import { type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';

/**
 * A permanent answer to the run's first request (a project that does not exist, a capability the
 * credential lacks, nothing at the base path, a credential the project refuses) stops the run before
 * the output folder, its checkpoint or its lock exist, with one message naming what to change and
 * exit 2 (3 for the credential); `run --dry-run` finds the same. A run with the setting fixed then
 * starts as new: no checkpoint of the refused run is in its way.
 */
const KEY = 'first-contact-key-0001';
const EVENTS_DENIED = 'first-contact-no-events-0001';
const STREAMS: StreamSpec[] = [
  { resource: 'assets', partitions: 2, limit: 1000 },
  { resource: 'events', partitions: 10, limit: 1000 },
];

let sim: Simulator;
/** The scripted servers of the tests, closed after them. */
const scripted: ScriptedServer[] = [];

beforeAll(async () => {
  sim = await newSimulator({
    events: 500,
    assets: 50,
    seed: 31,
    apiKeys: [KEY, EVENTS_DENIED],
    capabilities: { [EVENTS_DENIED]: ['assetsAcl:READ'] },
  });
});

afterAll(async () => {
  await Promise.all(scripted.map((server) => server.close()));
});

/** A server answering every request with `status` and the platform's error body; its base URL. */
async function answering(status: number, message: string): Promise<string> {
  const server = await startScriptedServer(() => ({ status, body: { error: { code: status, message } } }));
  scripted.push(server);
  return server.baseUrl;
}

/** Runs the job into an output folder that does not exist yet; it must not exist afterwards either. */
async function refusedRun(
  extra: Partial<JobSpec>,
  key = KEY,
  flags: string[] = [],
): Promise<Exit & { file: string; out: string }> {
  const dir = tempDir('first-contact');
  const out = join(dir, 'out');
  const file = writeJob(join(dir, 'job.yaml'), { baseUrl: sim.baseUrl, outDir: out, streams: STREAMS, ...extra });
  const exit = await runCliWith(['run', '--config', file, ...flags], { cwd: dir, env: { SIM_KEY: key } });
  expect(existsSync(out), `nothing written:\n${describeExit(exit)}`).toBe(false);
  expect(exit.stderr, 'no partition started').not.toContain('partition failed');
  expect(exit.stderr, 'no stack trace').not.toMatch(/^\s+at /m);
  return { ...exit, file, out };
}

const otherProject = () => sim.baseUrl.replace(/\/demo$/, '/other');

describe.concurrent('a permanent answer on first contact refuses the run before anything is written', () => {
  it('a project that does not exist: exit 2 naming source.baseUrl; the fixed job then starts as new', async () => {
    const exit = await refusedRun({ baseUrl: otherProject() });
    expect(exit.code, describeExit(exit)).toBe(2);
    const said = "The platform has no project 'other' (HTTP 403: Project 'other' does not exist). Check the project in source.baseUrl";
    expect(exit.stderr.split(said)).toHaveLength(2);
    writeJob(exit.file, { baseUrl: sim.baseUrl, outDir: exit.out, streams: STREAMS });
    const fixed = await runCliWith(['run', '--config', exit.file], { cwd: join(exit.out, '..'), env: { SIM_KEY: KEY } });
    expect(fixed.code, describeExit(fixed)).toBe(0);
  });

  it('a capability the credential lacks: exit 2 naming it', async () => {
    const exit = await refusedRun({}, EVENTS_DENIED);
    expect(exit.code, describeExit(exit)).toBe(2);
    expect(exit.stderr).toContain("The credential lacks the capability eventsAcl:READ in project 'demo'");
  });

  it('nothing at the base path (404): exit 2 naming source.baseUrl', async () => {
    const exit = await refusedRun({ baseUrl: await answering(404, 'Not Found') });
    expect(exit.code, describeExit(exit)).toBe(2);
    // The count's 404, then the list's: a gateway that passed the lists alone would give no total, no refusal.
    expect(exit.stderr).toMatch(/The platform has nothing at GET \/api\/v1\/projects\/scripted\/\w+ /);
    expect(exit.stderr).toContain('(HTTP 404: Not Found). Check source.baseUrl');
  });

  it('a 403 that names neither the project nor a capability: the credential, exit 3', async () => {
    const exit = await refusedRun({ baseUrl: await answering(403, 'Forbidden') });
    expect(exit.code, describeExit(exit)).toBe(3);
    expect(exit.stderr).toContain("The platform refused the credential for project 'scripted' (HTTP 403: Forbidden). Check source.auth");
  });

  it('run --dry-run: the same refusals, the same exit codes', async () => {
    const project = await refusedRun({ baseUrl: otherProject() }, KEY, ['--dry-run']);
    expect(project.code, describeExit(project)).toBe(2);
    const refusal = 'REFUSED     a run now would stop here: ';
    expect(project.stdout).toContain(`${refusal}The platform has no project 'other' (HTTP 403`);
    expect(project.stdout).toContain('Check the project in source.baseUrl');
    const capability = await refusedRun({}, EVENTS_DENIED, ['--dry-run']);
    expect(capability.code, describeExit(capability)).toBe(2);
    expect(capability.stdout).toContain(`${refusal}The credential lacks the capability eventsAcl:READ`);
  });
});
