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
  if (total === undefined || !past(rows, factor, total, READ_LIMIT_SLACK)) return;
  throw new ReadLimitError(
    `${stream} partition ${partition.m}/${partition.n}: the stream has read ${n(rows)} rows, more than ${factor} times the ${n(total)} items the platform counts in it (plus ${n(READ_LIMIT_SLACK)}): the platform is sending items again, so the partition stops; what it committed stays. If the count is known to be far off, raise source.maxReadFactor (0: no limit), and run bulk-extract verify to check the keys.`,
  );
}

/** Series a datapoints stream may list beyond `factor` times the platform's count: counts lag new series. */
export const SERIES_READ_SLACK = 1_000;

/**
 * Whether a datapoints stream's series listing has listed past its limit, `factor` times the
 * platform's count of the series plus SERIES_READ_SLACK: `listed` counts the series its partitions
 * listed, committed by earlier runs and taken by this one, so that a listing that lists series
 * again (one that ignores `partition` lists every series in every partition) is stopped across
 * runs and split workers too, where no memory of the series taken reaches. No count or a factor
 * of 0: no limit. Throws a ReadLimitError naming the partition whose page went past it.
 */
export function checkSeriesReadLimit(
  factor: number,
  stream: string,
  partition: { m: number; n: number },
  { listed, total }: { listed: number; total: number | undefined },
): void {
  if (total === undefined || !past(listed, factor, total, SERIES_READ_SLACK)) return;
  throw new ReadLimitError(
    `${stream} partition ${partition.m}/${partition.n}: the stream's series listing has listed ${n(listed)} series, more than ${factor} times the ${n(total)} series the platform counts in it (plus ${n(SERIES_READ_SLACK)}): the platform lists series again (a listing that ignores 'partition' lists every series in every partition), and their points would be written again, so the partition stops; what it committed stays. If the count is known to be far off, raise source.maxReadFactor (0: no limit), and run bulk-extract verify to check the keys.`,
  );
}

/** Whether `read` is past `factor` times `total` plus `slack`; a factor of 0 is no limit. */
function past(read: number, factor: number, total: number, slack: number): boolean {
  return factor !== 0 && read > Math.ceil(factor * total) + slack;
}

/** A count as the messages write it: 130,001. */
function n(value: number): string {
  return value.toLocaleString('en-US');
}
