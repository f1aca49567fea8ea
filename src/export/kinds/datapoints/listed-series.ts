import { BulkExtractError } from '../../../errors.js';
import type { Logger } from '../../../log.js';
import { IdSet, MAX_ID_SLOTS } from '../../../util/id-set.js';
import { checkSeriesReadLimit } from '../../partition/index.js';

/** The platform listed a series twice: its points would be written twice. */
export class SeriesRepeatedError extends BulkExtractError {
  readonly code = 'E_SERIES_REPEATED';
}

/** A page of a partition's series listing, as an error names it. */
export interface ListingPage {
  m: number;
  /** Its number among the pages this run took of the partition's listing, from 1. */
  number: number;
  /** The request: method, path and request id. */
  request: string;
}

/** The read limit of the stream's series (checkSeriesReadLimit). */
export interface SeriesLimit {
  /** `source.maxReadFactor`. */
  factor: number;
  /** The platform's count of the series this run lists (its share of them, for a worker), once known. */
  total: () => number | undefined;
}

/** Where a series was taken, in its tag: the partition (1 to 15) and the page (0: from the checkpoint). */
const PARTITION_BITS = 4;
const MAX_PAGE = 2 ** (32 - PARTITION_BITS) - 1;

/**
 * The series a datapoints stream's partitions listed in this process, shared by them, with where
 * each was listed. A series listed a second time (by another partition, on another page, or
 * among the series of the checkpoint) is refused with SeriesRepeatedError naming both places, as
 * its points would be written twice; the stream's other partitions then stop too, at their next
 * page or commit, as its listing cannot be trusted. The ids are held in an IdSet (12 bytes a slot,
 * at most MAX_ID_SLOTS: 48 MiB, 3,145,728 series); past that, new series are counted but not
 * remembered (said once in the log), and the read limit alone guards them.
 *
 * It also counts the series each partition listed (the checkpoint records the count), so that
 * the series listed by the stream, committed by earlier runs and taken by this one, stay within
 * `source.maxReadFactor` times the platform's count of them: the check that reaches across runs
 * and split workers, where this memory does not.
 */
export class ListedSeries {
  private readonly seen: IdSet;
  private readonly counts: Map<number, number>;
  private repeated: { id: number; first: string; again: string } | undefined;
  private full = false;

  constructor(
    private readonly stream: string,
    private readonly n: number,
    /** The series each partition had listed as the run started (the checkpoint's counts). */
    counts: ReadonlyMap<number, number>,
    private readonly limit: SeriesLimit,
    private readonly logger: Logger,
    maxSlots = MAX_ID_SLOTS,
  ) {
    this.seen = new IdSet(maxSlots);
    this.counts = new Map(counts);
  }

  /** The series partition m listed so far: what its checkpoint records. */
  count(m: number): number {
    return this.counts.get(m) ?? 0;
  }

  /** The series of the stream listed so far, by every partition. */
  get listed(): number {
    let sum = 0;
    for (const count of this.counts.values()) sum += count;
    return sum;
  }

  /**
   * The checkpoint's series of partition m that are not done (listed by an earlier run): a
   * listing that names one of them again is refused. A series in pieces comes once a piece.
   */
  resume(m: number, ids: readonly number[]): void {
    this.check(m);
    for (const id of ids) {
      const taken = this.seen.add(id, tagOf(m, 0));
      if (typeof taken === 'object' && partitionOf(taken.tag) !== m) this.refuse(id, taken.tag, placeOf(tagOf(m, 0), this.n));
    }
  }

  /** Partition m reads its listing again from its first page (its cursor was refused): what it listed is forgotten. */
  restart(m: number): void {
    this.seen.removeWhere((tag) => partitionOf(tag) === m);
    this.counts.set(m, 0);
  }

  /**
   * Takes the series of a page of partition `page.m`'s listing: throws SeriesRepeatedError for a
   * series listed before (or when another partition met one), ReadLimitError when the stream has
   * listed past its limit.
   */
  take(page: ListingPage, ids: readonly number[]): void {
    const { m } = page;
    this.check(m);
    const tag = tagOf(m, page.number);
    for (const id of ids) {
      const taken = this.seen.add(id, tag);
      if (taken === 'full') this.sayFull(m);
      else if (taken !== 'added') this.refuse(id, taken.tag, `partition ${m}/${this.n}, page ${page.number} (${page.request})`);
    }
    this.counts.set(m, this.count(m) + ids.length);
    const { factor, total } = this.limit;
    checkSeriesReadLimit(factor, this.stream, { m, n: this.n }, { listed: this.listed, total: total() });
  }

  /** Throws when the stream's listing named a series twice: its partitions stop at their next page or commit. */
  check(m: number): void {
    if (this.repeated === undefined) return;
    const { id, first, again } = this.repeated;
    throw new SeriesRepeatedError(
      `${this.stream} partition ${m}/${this.n} stops: the platform listed series ${id} twice in this stream (first in ${first}, then in ${again}), so its listing of series cannot be trusted and writing on could repeat points; what the partition committed stays.`,
    );
  }

  private refuse(id: number, firstTag: number, again: string): never {
    const first = placeOf(firstTag, this.n);
    this.repeated ??= { id, first, again };
    throw new SeriesRepeatedError(
      `${this.stream}: the platform listed series ${id} twice: first in ${first}, then again in ${again}. Its points would be written twice, so the partition stops, and the stream's other partitions with it; what they committed stays. The platform's listing is broken: one that ignores 'partition' lists every series in every partition (a stream with partitions: 1 does not depend on it), and one whose page repeats the page before names a series twice. Run again once the platform is fixed.`,
    );
  }

  private sayFull(m: number): void {
    if (this.full) return;
    this.full = true;
    this.logger.warn(
      { stream: this.stream, partition: `${m}/${this.n}`, series: this.seen.size, bytes: this.seen.bytes },
      `${this.stream}: more than ${this.seen.size.toLocaleString('en-US')} series listed in this run, the most whose ids are kept to refuse one listed twice; the series past them are not checked for a repeat (source.maxReadFactor still limits the series listed)`,
    );
  }
}

function tagOf(m: number, page: number): number {
  return ((Math.min(page, MAX_PAGE) << PARTITION_BITS) | m) >>> 0;
}

function partitionOf(tag: number): number {
  return tag & ((1 << PARTITION_BITS) - 1);
}

/** Where a tag says a series was listed, for a message. */
function placeOf(tag: number, n: number): string {
  const page = tag >>> PARTITION_BITS;
  const where = page === 0 ? 'the checkpoint\'s series not done yet' : `page ${page}`;
  return `partition ${partitionOf(tag)}/${n}, ${where}`;
}
