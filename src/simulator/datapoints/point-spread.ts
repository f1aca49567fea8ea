/**
 * How the simulator's datapoints are spread over its time series: `total` points in all, exactly,
 * a few long series, many short ones, some empty. Each series' share is computed in O(1) from its
 * index, with no table, so a billion series cost nothing until one is read.
 *
 * Series are ranked (a scrambled order, so that the long ones lie scattered over the collection and
 * over its partitions, not at its start); the points before rank r are
 * `floor(total * G(r / series))` with G rising steeply first and flat over the last ranks. A
 * series holds the difference between its rank and the next: the shares add up to `total`.
 */

/** The last ranks, this share of the series, hold no point: series that exist but were never written. */
const EMPTY_SHARE = 0.05;
/** Below 1 the first ranks take most points: with 1,000 series the longest holds about 13% of them. */
const SKEW = 0.3;

/** A bijection of 0..count-1 (i -> a*i + b mod count, a coprime with count): the ranks of the series. */
export class SeriesOrder {
  private readonly multiplier: number;
  private readonly offset: number;

  constructor(
    private readonly count: number,
    seed: number,
  ) {
    let multiplier = Math.max(1, Math.floor(count * 0.6180339887));
    while (count > 1 && gcd(multiplier, count) !== 1) multiplier++;
    this.multiplier = multiplier;
    this.offset = count > 0 ? seed % count : 0;
  }

  rank(index: number): number {
    if (this.count <= 1) return 0;
    return (mulMod(this.multiplier, index, this.count) + this.offset) % this.count;
  }
}

/** Points of the series at `rank` among `series` series sharing `total` points. */
export function pointsOfRank(rank: number, series: number, total: number): number {
  return pointsBefore(rank + 1, series, total) - pointsBefore(rank, series, total);
}

function pointsBefore(rank: number, series: number, total: number): number {
  const share = rank / series;
  if (share >= 1 - EMPTY_SHARE) return total;
  return Math.floor(total * Math.pow(share / (1 - EMPTY_SHARE), SKEW));
}

function gcd(a: number, b: number): number {
  let [x, y] = [a, b];
  while (y !== 0) [x, y] = [y, x % y];
  return x;
}

/** a * b mod m without leaving exact doubles: a and b below 2^32, m below 2^32. */
function mulMod(a: number, b: number, m: number): number {
  const high = Math.floor(b / 65_536);
  const low = b % 65_536;
  return (((a * high) % m) * 65_536 + a * low) % m;
}
