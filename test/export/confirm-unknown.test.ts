import { describe, expect, it } from 'vitest';
import { HttpStatusError } from '../../src/http/errors.js';
import type { ReadResponse } from '../../src/http/platform-client.js';
import { confirmUnknown, SeriesMissingError } from '../../src/export/kinds/datapoints/confirm-unknown.js';
import type { AskedQuery } from '../../src/export/kinds/datapoints/points-answer.js';

/**
 * The confirmation of series missing from an answer: only the platform's 400 whose `missing`
 * names every one of them confirms them unknown; any other answer names the series left out.
 */
const PATH = '/api/v1/projects/p/timeseries/data/list';
const ANSWERED = { method: 'POST', path: PATH, requestId: 'first-answer' };
const QUERIES: AskedQuery[] = [
  { ref: { id: 11 }, start: 0, end: 100, limit: 50, last: null },
  { ref: { externalId: 'TS-2' }, start: 5, end: 100, limit: 50, last: 7 },
];

/** A client whose one request gets `outcome`, and that keeps the body it was sent. */
function client(outcome: () => ReadResponse<boolean>) {
  const sent: Record<string, unknown>[] = [];
  return {
    sent,
    postRead: <T>(_path: string, body: Readonly<Record<string, unknown>>): Promise<ReadResponse<T>> => {
      sent.push({ ...body });
      return new Promise((resolve) => resolve(outcome() as ReadResponse<T>));
    },
  };
}

const refusal = (missing?: unknown[]) => () => {
  throw new HttpStatusError(400, 'Time series ids not found', undefined, { ...ANSWERED, requestId: 'confirm' }, undefined, missing);
};
const confirm = (fake: ReturnType<typeof client>) =>
  confirmUnknown(fake, PATH, QUERIES, ANSWERED, new AbortController().signal);

describe('confirmUnknown', () => {
  it('asks for the series alone, one point each, with ignoreUnknownIds: false; a 400 naming them all confirms them', async () => {
    const fake = client(refusal([{ externalId: 'TS-2' }, { id: 11 }]));
    await expect(confirm(fake)).resolves.toBeUndefined();
    expect(fake.sent).toEqual([{
      items: [{ id: 11, start: 0, end: 100, limit: 1 }, { externalId: 'TS-2', start: 5, end: 100, limit: 1 }],
      ignoreUnknownIds: false,
    }]);
  });

  it.each([
    ['a 400 that names another series', refusal([{ id: 11 }]), /series "TS-2" out of its answer.*HTTP 400 naming 1 missing, not this one \(request id confirm\)/],
    ['a 400 without missing', refusal(), /series 11 out of its answer.*HTTP 400 without naming any series missing/],
    ['an answer', () => ({ body: undefined, bytes: Buffer.alloc(0), path: PATH, requestId: 'confirm', attempts: 1, read: true }), /series 11 out of its answer.*it answered \(request id confirm\)/],
  ])('%s: E_SERIES_MISSING naming the series left out and the answer that left it out', async (_, outcome, message) => {
    const error = await confirm(client(outcome)).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SeriesMissingError);
    expect(error).toMatchObject({ code: 'E_SERIES_MISSING', requestId: 'first-answer' });
    expect((error as Error).message).toMatch(message);
  });

  it('a request that fails otherwise fails as it is', async () => {
    const failure = new HttpStatusError(503, 'Service Unavailable', undefined, ANSWERED);
    const error = await confirm(client(() => {
      throw failure;
    })).catch((caught: unknown) => caught);
    expect(error).toBe(failure);
  });
});
