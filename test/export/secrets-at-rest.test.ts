import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeExit, newJob, newSimulator, runCliWith } from '../support/resume-harness.js';
import { issueToken, loginCookie } from '../support/simulator-auth.js';

const KEY = 'at-rest-api-key-0001';
const CLIENT = { id: 'at-rest-client', secret: 'at-rest-client-secret-0001' };
const USER = { user: 'dana@example.com', password: 'at-rest-password-0001' };

/** Every file under `dir`, recursively. */
function allFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? allFiles(path) : [path];
  });
}

/**
 * No credential at rest or in output: for each auth mechanism, an export through the real CLI
 * (killed once and resumed, so checkpoint, manifest and logs are written several times) leaves no
 * API key, client secret, token or cookie in any file of the output folder (checkpoint, manifest,
 * Parquet and NDJSON shards, byte by byte) nor in anything the CLI printed.
 */
describe('no secret in the checkpoint, the manifest, the shards or the logs', () => {
  it.each(['api-key', 'token', 'oauth-client-credentials', 'cookie'] as const)('auth %s', async (mechanism) => {
    const sim = await newSimulator({
      events: 4000,
      assets: 200,
      seed: 3,
      apiKeys: [KEY],
      clients: [CLIENT],
      users: [USER],
      faults: { rate429: 0.1, resetRate: 0.02 },
    });
    const token = await issueToken(sim, CLIENT);
    const cookie = await loginCookie(sim, USER);
    const secrets = [KEY, CLIENT.secret, token, cookie, cookie.slice('session='.length), USER.password];
    const auth = {
      'api-key': { type: 'api-key', apiKey: '${SECRET}' },
      'token': { type: 'token', token: '${SECRET}' },
      'oauth-client-credentials': {
        type: 'oauth-client-credentials',
        tokenUrl: sim.tokenUrl,
        clientId: CLIENT.id,
        clientSecret: '${SECRET}',
      },
      'cookie': { type: 'cookie', cookie: '${SECRET}' },
    }[mechanism];
    const secret = { 'api-key': KEY, 'token': token, 'oauth-client-credentials': CLIENT.secret, 'cookie': cookie }[
      mechanism
    ];
    const job = newJob(sim, [{ resource: 'events', partitions: 2, limit: 500 }], { auth }, `at-rest-${mechanism}`);
    const env = { SECRET: secret };
    const outputs: string[] = [];
    for (const extra of [{ BULK_EXTRACT_CRASH_AT: 'after-checkpoint-write:3' }, {}]) {
      const exit = await runCliWith(['run', '--config', job.file, '--log-level', 'debug'], {
        cwd: job.dir,
        env: { ...env, ...extra },
      });
      outputs.push(exit.stdout, exit.stderr);
      if (Object.keys(extra).length === 0) expect(exit.code, describeExit(exit)).toBe(0);
      else expect(exit.signal, describeExit(exit)).toBe('SIGKILL');
    }
    const status = await runCliWith(['status', '--config', job.file], { cwd: job.dir, env });
    outputs.push(status.stdout, status.stderr);

    const files = allFiles(job.out);
    expect(files.some((f) => f.endsWith('.parquet'))).toBe(true);
    for (const text of secrets) {
      const needle = Buffer.from(text);
      for (const file of files) expect(readFileSync(file).includes(needle), `${text} in ${file}`).toBe(false);
      for (const output of outputs) expect(output.includes(text), `${text} printed`).toBe(false);
      expect(readFileSync(job.file, 'utf8').includes(text), `${text} in the job file`).toBe(false);
    }
  });
});
