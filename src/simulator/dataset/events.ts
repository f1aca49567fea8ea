import { hash3, Rng } from '../random.js';
import { RevisedSet, revisedDescription } from './revisions.js';
import { resourceSpec } from '../../resources/index.js';
import { DATA_SET_ID_BASE, type LinkedAssets, type Links } from './links.js';
import { type ListFilter, matchesItem, needsItem } from './match.js';
import { generateMetadata, holdsMetadata, type MetadataFilter, TIME_BASE_MS, TIME_SPAN_MS } from './shared.js';
import { DESCRIPTIONS, EVENT_SUBTYPES, EVENT_TYPES, SOURCES } from './vocabulary.js';

/** Event ids are `EVENT_ID_BASE + index * EVENT_ID_STRIDE`: above 2^32, below 2^53, unique. */
export const EVENT_ID_BASE = 5_000_000_000_000_000;
export const EVENT_ID_STRIDE = 7919;

const DAY_MS = 86_400_000;
const SALT = 0x0e7e;

export interface GeneratedEvent {
  id: number;
  externalId: string;
  type: string;
  subtype?: string;
  description?: string;
  startTime: number;
  endTime?: number;
  /** At least one when present: the platform never lists an empty list. */
  assetIds?: number[];
  source: string;
  dataSetId?: number;
  metadata?: Record<string, string>;
  createdTime: number;
  lastUpdatedTime: number;
}

/** The filters `matches` checks from the item's header (the others need the whole item). */
const FAST_FILTERS = new Set([
  'type',
  'subtype',
  'source',
  'minLastUpdatedTime',
  'maxLastUpdatedTime',
  'minStartTime',
  'maxStartTime',
  'externalIdPrefix',
  'metadata',
]);

/** The filters checked without generating the whole item, typed (a ListFilter). */
export type EventFilter = {
  type?: string;
  subtype?: string;
  source?: string;
  minLastUpdatedTime?: number;
  maxLastUpdatedTime?: number;
  minStartTime?: number;
  maxStartTime?: number;
  externalIdPrefix?: string;
};

/** The fields a filter looks at, drawn first from the item's random stream so matching is cheap. */
interface EventHeader {
  type: (typeof EVENT_TYPES)[number];
  subtype: string | undefined;
  source: string;
  createdTime: number;
  lastUpdatedTime: number;
  startTime: number;
}

/** Repeated to make the `padding` metadata value (`eventMetadataBytes`). */
const PADDING_TEXT = 'pressure reading within limits; ';

/**
 * `count` events, each a pure function of (seed, index). Nothing is stored, so ten million events
 * cost no more memory than ten.
 */
export class EventSet extends RevisedSet {
  readonly resource = 'events';
  private readonly rng = new Rng();

  constructor(
    private readonly seed: number,
    generated: number,
    private readonly links: Links,
    paddingBytes = 0,
  ) {
    super('events', generated);
    this.assets = links.assets;
    this.dataSetDraw = Math.max(links.dataSets, 1);
    const repeats = Math.ceil(paddingBytes / PADDING_TEXT.length);
    this.padding = paddingBytes > 0 ? PADDING_TEXT.repeat(repeats).slice(0, paddingBytes) : undefined;
  }

  /** Held here: item() runs for every item served. */
  private readonly assets: LinkedAssets;
  private readonly dataSetDraw: number;
  /** The `padding` metadata value of every event, when the simulator is asked for large items. */
  private readonly padding: string | undefined;

  idOf(index: number): number {
    return EVENT_ID_BASE + index * EVENT_ID_STRIDE;
  }

  externalIdOf(index: number): string {
    return `EV-${index.toString(36).toUpperCase().padStart(6, '0')}`;
  }

  /** A new version of the item: its `lastUpdatedTime` becomes `at`, as the platform does on an update. */
  update(index: number, at: number): void {
    const generated = index >= 0 && index < this.count ? this.header(index).lastUpdatedTime : 0;
    this.revisions.update(index, generated, at);
  }

  matches(index: number, filter: ListFilter): boolean {
    if (!this.matchesFast(index, filter)) return false;
    return !needsItem(filter, FAST_FILTERS) || matchesItem(resourceSpec('events'), this.item(index), filter, this.links);
  }

  private matchesFast(index: number, filter: Readonly<EventFilter & MetadataFilter>): boolean {
    const h = this.header(index);
    return (
      (filter.type === undefined || filter.type === h.type) &&
      (filter.subtype === undefined || filter.subtype === h.subtype) &&
      (filter.source === undefined || filter.source === h.source) &&
      (filter.minLastUpdatedTime === undefined || h.lastUpdatedTime >= filter.minLastUpdatedTime) &&
      (filter.maxLastUpdatedTime === undefined || h.lastUpdatedTime <= filter.maxLastUpdatedTime) &&
      (filter.minStartTime === undefined || h.startTime >= filter.minStartTime) &&
      (filter.maxStartTime === undefined || h.startTime <= filter.maxStartTime) &&
      (filter.externalIdPrefix === undefined || this.externalIdOf(index).startsWith(filter.externalIdPrefix)) &&
      // The metadata is drawn last: the whole item is generated only when it is asked about.
      (filter.metadata === undefined || holdsMetadata(this.item(index).metadata, filter.metadata))
    );
  }

  item(index: number, includeMetadata = true): GeneratedEvent {
    const h = this.header(index);
    const rng = this.rng;
    const assetIds = this.assetIds(rng);
    const event: GeneratedEvent = {
      id: this.idOf(index),
      externalId: this.externalIdOf(index),
      type: h.type,
      startTime: h.startTime,
      ...(assetIds.length > 0 ? { assetIds } : {}),
      source: h.source,
      createdTime: h.createdTime,
      lastUpdatedTime: h.lastUpdatedTime,
    };
    if (h.subtype !== undefined) event.subtype = h.subtype;
    if (!rng.chance(0.05)) event.endTime = h.startTime + 1000 + rng.int(7 * DAY_MS);
    if (rng.chance(0.7)) event.description = rng.pick(DESCRIPTIONS);
    if (rng.chance(0.85)) {
      const dataSet = rng.int(this.dataSetDraw);
      if (this.dataSetDraw !== 0 && this.links.dataSets > 0) event.dataSetId = DATA_SET_ID_BASE + dataSet;
    }
    const metadata = generateMetadata(rng);
    if (this.padding !== undefined) metadata.padding = this.padding;
    if (includeMetadata) event.metadata = metadata;
    const revision = this.revisions.revision(index);
    if (revision > 0) event.description = revisedDescription(event.description, revision);
    return event;
  }

  private header(index: number): EventHeader {
    const rng = this.rng.reset(hash3(this.seed, index, SALT));
    const type = rng.pick(EVENT_TYPES);
    const subtype = rng.chance(0.1) ? undefined : rng.pick(EVENT_SUBTYPES[type]);
    const source = rng.pick(SOURCES);
    const generatedCreated = TIME_BASE_MS + rng.int(TIME_SPAN_MS);
    const updated = rng.next();
    const generated = generatedCreated + (updated < 0.4 ? 0 : Math.floor(updated * updated * 180 * DAY_MS));
    const createdTime = this.revisions.createdTime(index, generatedCreated);
    const lastUpdatedTime = this.revisions.lastUpdatedTime(index, generated);
    const startTime = createdTime - rng.int(30 * DAY_MS);
    return { type, subtype, source, createdTime, lastUpdatedTime, startTime };
  }

  private assetIds(rng: Rng): number[] {
    const assets = this.assets;
    if (assets.generated === 0) return [];
    const wanted = rng.pick([0, 1, 1, 1, 2, 2, 3]);
    const ids: number[] = [];
    for (let attempt = 0; ids.length < wanted && attempt < 8; attempt++) {
      const id = assets.idOf(rng.int(assets.generated));
      if (!ids.includes(id)) ids.push(id);
    }
    return ids;
  }
}
