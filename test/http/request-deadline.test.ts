import { execFile } from 'node:child_process';
import { getEventListeners, once } from 'node:events';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { startDeadline } from '../../src/http/request-deadline.js';

describe('startDeadline', () => {
  it('aborts its signal once the time is up, and says so', async () => {
    const deadline = startDeadline(1, undefined);
    expect(deadline.expired()).toBe(false);
    await once(deadline.signal, 'abort');
    expect(deadline.expired()).toBe(true);
    deadline.clear();
  });

  it("follows the caller's abort without calling it expired", () => {
    const caller = new AbortController();
    const deadline = startDeadline(60_000, caller.signal);
    caller.abort(new Error('SIGINT'));
    expect(deadline.signal.aborted).toBe(true);
    expect(deadline.expired()).toBe(false);
    deadline.clear();
  });

  it("a caller's signal aborted already aborts it at once", () => {
    const deadline = startDeadline(60_000, AbortSignal.abort());
    expect(deadline.signal.aborted).toBe(true);
    expect(deadline.expired()).toBe(false);
    deadline.clear();
  });

  it("clear() stops the timer and lets go of the caller's signal", () => {
    const caller = new AbortController();
    const deadline = startDeadline(60_000, caller.signal);
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(1);
    deadline.clear();
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
    caller.abort();
    expect(deadline.signal.aborted).toBe(false);
  });

  it('keeps the process alive until it fires: a wait on nothing else ends with it, not with the process', { timeout: 30_000 }, async () => {
    // A request waiting for room in the byte budget waits on nothing the event loop sees: an
    // unref'ed deadline let Node end such a process at once (exit 13, no word) instead of failing it.
    const script = [
      `const { startDeadline } = await import(${JSON.stringify(new URL('../../dist/http/request-deadline.js', import.meta.url).href)});`,
      'const deadline = startDeadline(20, undefined);',
      "await new Promise((resolve) => deadline.signal.addEventListener('abort', resolve));",
      "console.log('expired', deadline.expired());",
    ].join('\n');
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script]);
    expect(stdout.trim()).toBe('expired true');
  });
});
