import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCliWith } from '../support/resume-harness.js';

const cwd = mkdtempSync(join(tmpdir(), 'bulk-extract-output-flag-'));

afterAll(() => rmSync(cwd, { recursive: true, force: true }));

describe('an s3:// output named without a job file', () => {
  it('status --out s3://... says it needs --config (exit 2), never "no checkpoint at <cwd>/s3:/..."', async () => {
    const done = await runCliWith(['status', '--out', 's3://lake/exports/full'], { cwd });
    expect(done.code).toBe(2);
    expect(done.stderr).toContain('--out s3://lake/exports/full is a bucket');
    expect(done.stderr).toContain('bulk-extract status --config FILE');
    expect(done.stdout).not.toContain('No checkpoint');
    expect(`${done.stdout}${done.stderr}`).not.toContain('s3:/lake');
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('verify s3://... says it needs --config (exit 2); a URL with credentials is not repeated', async () => {
    const done = await runCliWith(['verify', 's3://key:secret@lake/exports'], { cwd });
    expect(done.code).toBe(2);
    expect(done.stderr).toContain('an s3:// URL is a bucket');
    expect(done.stderr).toContain('bulk-extract verify --config FILE');
    expect(done.stderr).not.toContain('secret');
    expect(done.stderr).not.toContain('has no _manifest.json');
  });
});
