import { spawnSync } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../src/log.js';
import { Redactor } from '../src/util/redact.js';
import { removeTempDirs, tempDir } from './support/export-harness.js';
import { captureLogger } from './support/log-capture.js';

/** The job's sensitive values (JobConfig.redactor) are hidden in every log line, JSON or human-readable. */
const VALUE = 'log-token "value" 0001';
const redactor = new Redactor([VALUE]);

describe('log records hide the job\'s sensitive values', () => {
  it('JSON lines: in the message and in any field, also percent-encoded, and the line stays JSON', () => {
    const logs = captureLogger('debug', redactor);
    logs.logger.warn({ path: `/projects/${encodeURIComponent(VALUE)}/events`, nested: { value: VALUE } }, `failed at ${VALUE}`);
    const [line] = logs.lines();
    expect(line).not.toContain('log-token');
    expect(logs.records()[0]).toMatchObject({
      msg: 'failed at [redacted]',
      path: '/projects/[redacted]/events',
      nested: { value: '[redacted]' },
    });
  });

  it('human-readable lines, message and fields (at debug)', () => {
    const lines: string[] = [];
    const logger = createLogger('debug', true, { writeLine: (text) => lines.push(text) }, redactor);
    logger.error({ err: new Error(`boom at ${VALUE}`) }, `partition failed: ${VALUE}`);
    expect(lines.join('')).toContain('partition failed: [redacted]');
    expect(lines.join('')).not.toContain('log-token');
  });
});

describe('JSON log lines are written at once', () => {
  afterEach(removeTempDirs);

  it('none comes after a line printed after it, with stdout and stderr in one file (>log 2>&1)', () => {
    const log = fileURLToPath(new URL('../dist/log.js', import.meta.url));
    // Many records, then at once a plain line: written later, a record would land after it.
    const script = `const { createLogger } = await import(${JSON.stringify(log)});
      const logger = createLogger('info', false);
      for (let i = 0; i < 200; i++) logger.info({ i }, 'record');
      process.stdout.write('the report\\n');`;
    const file = join(tempDir('log-order-'), 'log');
    const fd = openSync(file, 'w');
    try {
      const ran = spawnSync(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', fd, fd] });
      expect(ran.status).toBe(0);
    } finally {
      closeSync(fd);
    }
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(201);
    expect(lines.at(-1)).toBe('the report');
  });
});
