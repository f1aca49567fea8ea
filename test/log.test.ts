import { describe, expect, it } from 'vitest';
import { createLogger } from '../src/log.js';
import { Redactor } from '../src/util/redact.js';
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
