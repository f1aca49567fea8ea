import type { IncomingHttpHeaders } from 'node:http';
import type { FaultKind } from './faults.js';

export type StatsEvent = FaultKind | 'concurrency-cap' | 'rate-cap' | 'short-page' | 'cursor-expired';

/** Counters a test or benchmark reads to see what the simulator did. */
export interface SimulatorStats {
  /** Every request received, on any route. */
  requests: number;
  /** Responses by status code; a reset connection counts under the status it started with. */
  byStatus: Record<string, number>;
  /** Requests by `METHOD /route`, e.g. `GET /events`, `POST /oauth2/token`. */
  byRoute: Record<string, number>;
  /** Injected faults and cap hits by kind. */
  faults: Partial<Record<StatsEvent, number>>;
  /** List pages served with status 200 (datapoints answers included), and the items in them. */
  pages: number;
  items: number;
  /** Datapoints (raw or aggregate) in the answers of `POST /timeseries/data/list` served with 200. */
  datapoints: number;
  /** List requests being served now, and the most at once since the last reset. */
  inFlight: number;
  maxInFlight: number;
  tokensIssued: number;
  /**
   * Requests by the identification headers they carried (`x-cdp-app`, `x-cdp-sdk`): `platform`
   * for every route but the token endpoint, `token` for the identity provider's token endpoint
   * (a client should send it neither header). Together they count every request.
   */
  clients: { platform: ClientCount[]; token: ClientCount[] };
}

/** Requests that carried one pair of identification headers; `null` for a header not sent. */
export interface ClientCount {
  /** `x-cdp-app`: the application, e.g. `bulk-extract`. */
  app: string | null;
  /** `x-cdp-sdk`: the client library and its version, e.g. `bulk-extract:0.1.0`. */
  sdk: string | null;
  requests: number;
}

export function emptyStats(): SimulatorStats {
  return {
    requests: 0,
    byStatus: {},
    byRoute: {},
    faults: {},
    pages: 0,
    items: 0,
    datapoints: 0,
    inFlight: 0,
    maxInFlight: 0,
    tokensIssued: 0,
    clients: { platform: [], token: [] },
  };
}

/** Counts one request under the identification headers it carried, in order of first sight. */
export function countClient(counts: ClientCount[], headers: IncomingHttpHeaders): void {
  const app = headerText(headers['x-cdp-app']);
  const sdk = headerText(headers['x-cdp-sdk']);
  const seen = counts.find((count) => count.app === app && count.sdk === sdk);
  if (seen === undefined) counts.push({ app, sdk, requests: 1 });
  else seen.requests++;
}

/** A header as one string (repeats joined as Node joins them), or null when it was not sent. */
function headerText(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(', ') : value;
}

export function increment<K extends string>(counts: Partial<Record<K, number>>, key: K, by = 1): void {
  counts[key] = (counts[key] ?? 0) + by;
}

/** One request as seen by the simulator, kept when `recordRequests` is on. */
export interface RecordedRequest {
  requestId: string;
  method: string;
  route: string;
  /** Query parameters in the order sent (never credentials: those travel in headers). */
  params: [string, string][];
  status: number;
  mechanism: string | undefined;
  /** The JSON body of a POST to a resource route, e.g. `{"filter":{"type":"alarm"}}` (when it parsed). */
  body?: unknown;
}

/** What serving a request learned about it, for the record: who sent it and what body it carried. */
export interface RequestNotes {
  mechanism?: string;
  body?: unknown;
}
