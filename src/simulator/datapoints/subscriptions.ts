import { hash3 } from '../random.js';
import type { GeneratedTimeseries, TimeseriesSet } from '../dataset/timeseries.js';
import { seriesIndexOf } from './series-lookup.js';

/**
 * Which series a subscription follows: named by externalId (`timeSeriesIds`, as the platform
 * names them), or selected by a filter. The simulator's filter language is the smallest useful
 * part of the platform's: every series (no filter), or `equals` on `isString` or `isStep`.
 */
export type SeriesSelection =
  | { timeSeriesIds: string[] } |
  { filter: { equals: { property: ['isString' | 'isStep']; value: boolean } } | undefined };

/** A subscription as created: what the platform's answers show of it. */
export interface SubscriptionSpec {
  externalId: string;
  name: string;
  /** 1..100, fixed at creation as on the platform. */
  partitionCount: number;
  selection: SeriesSelection;
}

export interface Subscription extends SubscriptionSpec {
  /** When it was created (epoch ms): its feed starts there. */
  createdTime: number;
  /** The series it follows, by index in the timeseries collection, ascending. */
  members: number[];
}

/** Partitions a simulator subscription's series are spread over: at most the platform's 100. */
export const MAX_PARTITIONS = 100;

const SALT_PARTITION = 0x5b5c;

/**
 * The partition of a subscription a series belongs to: drawn from its id, so that the same series
 * is always in the same partition of a subscription with that many partitions, and every series in
 * exactly one.
 */
export function partitionOfSeries(id: number, partitionCount: number): number {
  return hash3(SALT_PARTITION, Math.floor(id / 0x1_0000_0000), id % 0x1_0000_0000) % partitionCount;
}

/**
 * The subscriptions of one simulator, by externalId, in the order created. Their members are fixed
 * at creation among the series generated at start (a series inserted later by `--churn` has no
 * points), so `subscriptionChanges` are always empty.
 */
export class SubscriptionStore {
  private readonly byExternalId = new Map<string, Subscription>();

  constructor(private readonly timeseries: TimeseriesSet) {}

  /** Creates a subscription at `nowMs`; a message when its externalId is taken or a series is unknown. */
  create(spec: SubscriptionSpec, nowMs: number): Subscription | string {
    if (this.byExternalId.has(spec.externalId)) {
      return `A subscription with externalId '${spec.externalId}' already exists.`;
    }
    const members = this.membersOf(spec.selection);
    if (typeof members === 'string') return members;
    const subscription: Subscription = { ...spec, createdTime: nowMs, members };
    this.byExternalId.set(spec.externalId, subscription);
    return subscription;
  }

  get(externalId: string): Subscription | undefined {
    return this.byExternalId.get(externalId);
  }

  list(): Subscription[] {
    return [...this.byExternalId.values()];
  }

  /** The series the subscription's partition `index` holds, ascending. */
  partitionMembers(subscription: Subscription, index: number): number[] {
    return subscription.members.filter(
      (member) => partitionOfSeries(this.timeseries.idOf(member), subscription.partitionCount) === index,
    );
  }

  series(index: number): GeneratedTimeseries {
    return this.timeseries.item(index, false);
  }

  private membersOf(selection: SeriesSelection): number[] | string {
    if ('timeSeriesIds' in selection) {
      const members = new Set<number>();
      for (const [at, externalId] of selection.timeSeriesIds.entries()) {
        const index = seriesIndexOf(this.timeseries, { externalId });
        if (index === undefined) {
          return `Invalid property 'items[0].timeSeriesIds[${at}]': no time series has externalId '${externalId}'.`;
        }
        members.add(index);
      }
      return [...members].sort((a, b) => a - b);
    }
    const members: number[] = [];
    const equals = selection.filter?.equals;
    for (let index = 0; index < this.timeseries.generated; index++) {
      if (equals === undefined || this.series(index)[equals.property[0]] === equals.value) members.push(index);
    }
    return members;
  }
}
