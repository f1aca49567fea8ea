import type { FaultKind, RateGate, StatusFault } from './faults.js';
import type { FaultOptions } from './options.js';
import { type Exchange, sendError, sendText } from './respond.js';
import { increment, type SimulatorStats } from './stats.js';

/**
 * The answers a served route gives instead of its page when a cap or a drawn fault says so: the
 * same on every route that serves pages (the collections' lists, the datapoints).
 */
const STATUS_TEXT: Record<Exclude<StatusFault, '429' | '429-retry-after'>, string> = {
  500: 'Internal server error',
  502: 'Bad gateway',
  503: 'Service unavailable',
  504: 'Gateway timeout',
};

/** The faults answered with a status instead of a page. */
const STATUS_FAULTS: Record<StatusFault, true> = {
  '429': true,
  '429-retry-after': true,
  '500': true,
  '502': true,
  '503': true,
  '504': true,
};

function throttled(limit: number, what: string): string {
  return `Project exceeded maximum number='${limit}' of ${what}. Please try again later.`;
}

/** The 429 message of a cap the request runs into (concurrent requests, then requests per second). */
export function capReached(
  faults: FaultOptions,
  rateGate: RateGate | undefined,
  stats: SimulatorStats,
): string | undefined {
  if (faults.maxConcurrent !== undefined && stats.inFlight >= faults.maxConcurrent) {
    increment(stats.faults, 'concurrency-cap');
    return throttled(faults.maxConcurrent, 'concurrent requests');
  }
  if (rateGate !== undefined && !rateGate.tryTake()) {
    increment(stats.faults, 'rate-cap');
    return throttled(faults.maxRps ?? 0, 'requests per second');
  }
  return undefined;
}

export function isStatusFault(fault: FaultKind | undefined): fault is StatusFault {
  return fault !== undefined && fault in STATUS_FAULTS;
}

export function sendStatusFault(ex: Exchange, fault: StatusFault, faults: FaultOptions): Promise<void> {
  switch (fault) {
    case '429':
      return sendError(ex, 429, throttled(50, 'concurrent requests'));
    case '429-retry-after':
      return sendError(ex, 429, throttled(50, 'concurrent requests'), {
        'retry-after': String(faults.retryAfterSeconds),
      });
    default:
      return sendServerError(ex, Number(fault), STATUS_TEXT[fault], faults.htmlErrors);
  }
}

function sendServerError(ex: Exchange, status: number, text: string, html: boolean): Promise<void> {
  if (!html || status === 500) return sendError(ex, status, text);
  const title = `${status} ${text.replace(/\b\w/g, (c) => c.toUpperCase())}`;
  const page = `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`;
  return sendText(ex, status, page, 'text/html');
}

/** Counts the request as in flight until its response closes (stats.maxInFlight follows). */
export function countInFlight(ex: Exchange, current: () => SimulatorStats): void {
  const stats = current();
  stats.inFlight++;
  stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
  ex.res.once('close', () => current().inFlight--);
}
