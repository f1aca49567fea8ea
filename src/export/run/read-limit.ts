import { BulkExtractError } from '../../errors.js';

/** A stream read far more rows than the platform counts in it: the platform is sending rows again. */
export class ReadLimitError extends BulkExtractError {
  readonly code = 'E_READ_LIMIT';
}

/** Rows a stream may read beyond `factor` times its count: counts are approximate, and small ones vary most. */
export const READ_LIMIT_SLACK = 10_000;

/** A stream's rows so far (committed by earlier runs of its current run, and read by this one) and its count. */
export interface StreamRows {
  rows: number;
  /** The platform's count of what this run reads (this worker's share of it), when it answered one. */
  total: number | undefined;
}

/**
 * Whether a stream has read past its limit, `factor` times the platform's count of it plus
 * READ_LIMIT_SLACK: a chain that repeats rows under ever new cursors never ends by itself, and no
 * other check sees it. No count (relationships, a count that failed) or a factor of 0: no limit.
 * Throws a ReadLimitError naming the partition whose page went past it.
 */
export function checkReadLimit(
  factor: number,
  stream: string,
  partition: { m: number; n: number },
  { rows, total }: StreamRows,
): void {
  if (factor === 0 || total === undefined) return;
  const limit = Math.ceil(factor * total) + READ_LIMIT_SLACK;
  if (rows <= limit) return;
  const n = (value: number) => value.toLocaleString('en-US');
  throw new ReadLimitError(
    `${stream} partition ${partition.m}/${partition.n}: the stream has read ${n(rows)} rows, more than ${factor} times the ${n(total)} items the platform counts in it (plus ${n(READ_LIMIT_SLACK)}): the platform is sending items again, so the partition stops; what it committed stays. If the count is known to be far off, raise source.maxReadFactor (0: no limit), and run bulk-extract verify to check the keys.`,
  );
}
