import { describe, expect, it } from 'vitest';
import { formatProgress, type ProgressSnapshot } from '../../src/cli/progress.js';
import { StatusLine } from '../../src/cli/status-line.js';
import { HttpStatusError } from '../../src/http/errors.js';
import { createLogger, errorFields } from '../../src/log.js';

/**
 * The terminal: the live line is cleared before a log line and drawn
 * again after it; human-readable log lines are one line each, with no stack trace below debug.
 */
const CLEAR = '\r\x1b[2K';

function fakeTerminal(columns?: number) {
  const writes: string[] = [];
  return { out: { write: (text: string) => writes.push(text), columns }, writes, screen: () => writes.join('') };
}

describe('the status line and log lines', () => {
  it('clears the live line before a log line and draws it again after, so they never share a line', () => {
    const terminal = fakeTerminal();
    const line = new StatusLine(terminal.out);
    const logger = createLogger('info', true, line);
    line.show('events 1,000 rows');
    logger.warn('throttled: pacing request starts at 8/s');
    expect(render(terminal.screen())).toEqual([expect.stringMatching(/^\[[\d:]+\] WARN: throttled: pacing request starts at 8\/s$/), 'events 1,000 rows']);
    line.show('events 2,000 rows');
    logger.info('a second line');
    line.clear();
    const screen = render(terminal.screen());
    expect(screen.slice(0, 2)).toEqual([expect.stringContaining('WARN: throttled'), expect.stringMatching(/INFO: a second line$/)]);
    expect(screen.slice(2).join(''), 'cleared at the end').toBe('');
  });

  it('cuts the live line to the terminal\'s width, so it never wraps; a width of 0 is unknown', () => {
    const terminal = fakeTerminal(40);
    new StatusLine(terminal.out).show('x'.repeat(50));
    expect(terminal.writes.at(-1)?.replace(CLEAR, '').length).toBeLessThan(40);
    const unknown = fakeTerminal(0);
    new StatusLine(unknown.out).show('x'.repeat(50));
    expect(unknown.writes.at(-1)?.replace(CLEAR, '')).toBe('x'.repeat(50));
  });

  it('shows no stack trace and no fields at info (one line a record); debug shows both', () => {
    const error = new HttpStatusError(503, 'Service unavailable', undefined, { method: 'GET', path: '/api/v1/projects/p/events', attempts: 1 });
    for (const [level, verbose] of [['info', false], ['debug', true]] as const) {
      const terminal = fakeTerminal();
      const logger = createLogger(level, true, new StatusLine(terminal.out));
      logger.error({ stream: 'events', partition: 3, ...errorFields(error, logger) }, `partition failed: ${error.message}`);
      const text = terminal.screen();
      expect(text.includes('    at '), `${level}: stack`).toBe(verbose);
      expect(text.trimEnd().split('\n').length === 1, `${level}: one line`).toBe(!verbose);
    }
  });
});

/** What a terminal shows for `text`: \r returns to the line's start, ESC[2K clears the line. */
function render(text: string): string[] {
  const done: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    if (text.startsWith(CLEAR, i)) {
      current = '';
      i += CLEAR.length - 1;
    } else if (text[i] === '\n') {
      done.push(current);
      current = '';
    } else {
      current += text[i];
    }
  }
  return [...done, current];
}

describe('formatProgress', () => {
  const base: Omit<ProgressSnapshot, 'streams'> = {
    rows: 0,
    rowsPerSecond: 1000,
    partitionsDone: 2,
    partitions: 12,
    retries: 1,
    elapsedSeconds: 65,
  };
  const stream = { partitions: 10, done: 0, rowsPerSecond: 1000 };

  it.each([
    ['a known total: percent and ETA', { name: 'events', rows: 60_000, total: 200_000 }, 'events 60,000/200,000 30% ETA 2m20s'],
    ['no total (no count from the platform)', { name: 'events', rows: 60_000, total: undefined }, 'events 60,000'],
    ['past the approximate total: no percent above 99', { name: 'events', rows: 201_000, total: 200_000 }, 'events 201,000/~200,000 99%+'],
    ['every partition done', { name: 'assets', rows: 20_000, total: 19_000, done: 10 }, 'assets 20,000 done'],
  ])('%s', (_, s, expected) => {
    const text = formatProgress({ ...base, streams: [{ ...stream, ...s }] });
    expect(text).toBe(`${expected} | 1,000 rows/s, 2/12 partitions done, 1 retries, 1m05s`);
  });

  it('one part per stream', () => {
    const text = formatProgress({
      ...base,
      streams: [
        { ...stream, name: 'events', rows: 10, total: 100 },
        { ...stream, name: 'assets', rows: 5, total: undefined },
      ],
    });
    expect(text.startsWith('events 10/100 10% ETA 1s · assets 5 |')).toBe(true);
  });
});
