import { type ChainClient, type ChainPage, drainCursorChain } from '../../../http/cursor-chain.js';
import { BadResponseError, HttpStatusError } from '../../../http/errors.js';
import { queryRefused } from '../../../http/query-refused.js';
import { ResumeCursorRefused } from '../../partition/index.js';
import type { ByteBudget } from '../../../page/index.js';
import { chainRequest } from '../collections/index.js';
import type { SeriesRef } from './points-answer.js';
import type { DmFilter } from '../../../config/dm-filter.js';
import type { ViewRef } from '../../../resources/index.js';
import type { NodeId } from '../../state/index.js';
import type { ListRequest as ChainRequest } from '../../partition/index.js';

/** Where a partition's listing of series stands: what the checkpoint records of it. */
export interface ListingState {
  /** The cursor of the next page; null: the first page (or none, once `listed`). */
  cursor: string | null;
  listed: boolean;
}

/** A page of series: their refs, its number among the pages this source took, and its request (for errors). */
export interface SeriesPage {
  refs: SeriesRef[];
  number: number;
  /** Method, path and request id: `GET /timeseries, request id abc`. */
  request: string;
}

/**
 * The series of one datapoints partition, a page at a time: listed through the timeseries
 * collection (`partition=m/n` and the stream's filters) from where the checkpoint left off, or,
 * for explicit series, the partition's share of the list, all at once.
 */
export class SeriesSource {
  private chain: AsyncGenerator<ChainPage, void, undefined> | undefined;
  private state: ListingState;
  /** The next page is the first one read from the checkpoint's cursor. */
  private fromCheckpoint = false;
  /** Pages taken so far. */
  private pages = 0;

  private constructor(
    private readonly listing: ListingRequest | undefined,
    private explicit: SeriesRef[] | undefined,
    state: ListingState,
    /** Nodes of a view: the request of their list, and the partition's share of them. */
    private readonly nodes?: { request: ChainRequest; mine: (ref: NodeId) => boolean } | undefined,
  ) {
    this.state = { ...state };
  }

  /** A listed source: `params` are the partition's listing parameters (limit, filters, partition). */
  static listed(listing: ListingRequest, state: ListingState): SeriesSource {
    return new SeriesSource(listing, undefined, state);
  }

  /**
   * The nodes of a view that match `filter`, listed through `POST /models/instances/list` (which has
   * no `partition`: each partition lists them all and keeps its share, by a hash of each node's key,
   * so that the shares stay disjoint however the pages fall), each a series named by instanceId.
   */
  static viewNodes(
    listing: Omit<ListingRequest, 'params'>,
    view: ViewRef,
    filter: DmFilter | undefined,
    part: { m: number; n: number; limit: number },
    state: ListingState,
  ): SeriesSource {
    const source = { type: 'view', ...view };
    const hasData = { hasData: [source] };
    const body = {
      instanceType: 'node',
      sources: [{ source }],
      filter: filter === undefined ? hasData : { and: [hasData, filter] },
      limit: part.limit,
    };
    const mine = (ref: NodeId) => hash32(`${ref.space}\u0000${ref.externalId}`) % part.n === part.m - 1;
    return new SeriesSource({ ...listing, params: [] }, undefined, state, {
      request: { method: 'POST', path: '/models/instances/list', body },
      mine,
    });
  }

  /** Explicit series: entry i of the list belongs to partition (i mod n) + 1. */
  static explicit(refs: readonly SeriesRef[], m: number, n: number, state: ListingState): SeriesSource {
    const share = refs.filter((_, i) => i % n === m - 1);
    return new SeriesSource(undefined, state.listed ? undefined : share, state);
  }

  get position(): ListingState {
    return { ...this.state };
  }

  get done(): boolean {
    return this.state.listed;
  }

  /** The next page's series, or undefined once the listing is done. */
  async take(): Promise<SeriesPage | undefined> {
    if (this.state.listed) return undefined;
    if (this.listing === undefined) {
      const refs = this.explicit ?? [];
      this.explicit = undefined;
      this.state = { cursor: null, listed: true };
      return { refs, number: ++this.pages, request: 'the job file\'s list' };
    }
    if (this.chain === undefined) this.fromCheckpoint = this.state.cursor !== null;
    const request = this.nodes?.request ?? chainRequest('timeseries', this.listing.params);
    this.chain ??= drainCursorChain(this.listing.client, {
      ...request,
      startCursor: this.state.cursor ?? undefined,
      signal: this.listing.signal,
      budget: this.listing.budget,
    });
    const next = await this.chain.next().catch((error: unknown) => {
      // The first page from a checkpointed cursor refused: the partition starts over (drain-partition.ts).
      const refused = this.fromCheckpoint && error instanceof HttpStatusError && error.status === 400;
      if (refused) throw new ResumeCursorRefused(error);
      // The first page of a listing from its start refused: the stream's series filter is.
      const first = this.pages === 0 && this.state.cursor === null && this.listing?.stream !== undefined;
      const fix = `Change the series filter (timeseries) of stream ${this.listing?.stream ?? ''} in the job file as the platform's message says`;
      throw (first ? queryRefused(error, this.listing?.stream ?? '', fix) : undefined) ?? error;
    });
    this.fromCheckpoint = false;
    if (next.done === true) {
      this.state = { cursor: null, listed: true };
      return undefined;
    }
    const page = next.value;
    try {
      const refs = this.nodes === undefined ? seriesOf(page) : nodesOf(page, this.nodes.mine);
      const { nextCursor } = page;
      this.state = nextCursor === undefined ? { cursor: null, listed: true } : { cursor: nextCursor, listed: false };
      const id = page.requestId === undefined ? '' : `, request id ${page.requestId}`;
      return { refs, number: ++this.pages, request: `${request.method} ${request.path}${id}` };
    } finally {
      page.release();
    }
  }

  /** Ends the listing chain early (the partition stopped). */
  async close(): Promise<void> {
    await this.chain?.return(undefined);
  }
}

export interface ListingRequest {
  client: ChainClient;
  /** The stream's name: a first page refused is then its query refused (E_QUERY_REFUSED). */
  stream?: string | undefined;
  params: readonly (readonly [string, string])[];
  signal?: AbortSignal | undefined;
  budget?: ByteBudget | undefined;
}

/** The series of a listing page, by id: every item must have one. */
function seriesOf(page: ChainPage): SeriesRef[] {
  const refs: SeriesRef[] = [];
  for (let i = 0; i < page.items.length; i++) {
    const id = (page.items.value(i) as { id?: unknown } | null)?.id;
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1) {
      throw new BadResponseError(`Time series ${i + 1} of the listing has no integer 'id'`, {
        method: 'GET',
        path: '/timeseries',
        ...(page.requestId === undefined ? {} : { requestId: page.requestId }),
      });
    }
    refs.push({ id });
  }
  return refs;
}

/** The nodes of an instances list page that are this partition's, each a series by instanceId. */
function nodesOf(page: ChainPage, mine: (ref: NodeId) => boolean): SeriesRef[] {
  const refs: SeriesRef[] = [];
  for (let i = 0; i < page.items.length; i++) {
    const { space, externalId } = page.items.key(i);
    if (space === undefined || externalId === undefined) {
      throw new BadResponseError(`Node ${i + 1} of the instances list has no 'space' or 'externalId'`, {
        method: 'POST',
        path: '/models/instances/list',
        ...(page.requestId === undefined ? {} : { requestId: page.requestId }),
      });
    }
    const ref = { space, externalId };
    if (mine(ref)) refs.push({ instanceId: ref });
  }
  return refs;
}

/** FNV-1a of a text's UTF-16 units: a stable hash, the same in every run and process. */
function hash32(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return hash;
}
