import type { Instance, InstanceKind, Simulator } from '../../src/simulator/index.js';
import { type Reply, send } from './http.js';

/** An instance as the `/models/instances` routes answer it. */
export interface InstanceItem {
  instanceType: 'node' | 'edge';
  space: string;
  externalId: string;
  version: number;
  createdTime: number;
  lastUpdatedTime: number;
  deletedTime?: number;
  type?: { space: string; externalId: string };
  startNode?: { space: string; externalId: string };
  endNode?: { space: string; externalId: string };
  properties: Record<string, Record<string, Record<string, unknown>>>;
}

export interface ListAnswer {
  items: InstanceItem[];
  nextCursor?: string;
  typing?: Record<string, Record<string, Record<string, Record<string, unknown>>>>;
}

export interface SyncAnswer {
  items: Record<string, InstanceItem[]>;
  nextCursor: Record<string, string>;
  typing?: Record<string, unknown>;
}

/** `{type: 'view', space, externalId, version}` of a view of the simulated data model. */
export function viewRef(externalId: string, space = 'cdf_cdm'): { type: 'view'; space: string; externalId: string; version: string } {
  return { type: 'view', space, externalId, version: 'v1' };
}

/** A POST of a JSON body to a route under the simulator's base URL. */
export function post(sim: Simulator, path: string, body: unknown, headers: Record<string, string>): Promise<Reply> {
  return send(`${sim.baseUrl}${path}`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** Follows a `/models/instances/list` chain to its end (only `cursor` changing); every page's answer. */
export async function listAll(
  sim: Simulator,
  body: Record<string, unknown>,
  headers: Record<string, string>,
): Promise<ListAnswer[]> {
  const pages: ListAnswer[] = [];
  let cursor: string | undefined;
  do {
    const reply = await post(sim, '/models/instances/list', { ...body, ...(cursor === undefined ? {} : { cursor }) }, headers);
    if (reply.status !== 200) throw new Error(`instances/list answered ${reply.status}: ${reply.text}`);
    const page = reply.json<ListAnswer>();
    pages.push(page);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return pages;
}

/** `space:externalId` of an instance or a reference. */
export function keyOf(item: { space: string; externalId: string }): string {
  return `${item.space}:${item.externalId}`;
}

/** The simulator's live (not deleted) instances of `kind` that `keep` holds, as keys, in order. */
export function liveKeys(
  sim: Simulator,
  kind: InstanceKind,
  keep: (instance: Instance) => boolean = () => true,
): string[] {
  const keys: string[] = [];
  for (let index = 0; index < sim.instances.count(kind); index++) {
    if (sim.instances.isDeleted(kind, index)) continue;
    const instance = sim.instances.instance(kind, index);
    if (keep(instance)) keys.push(keyOf(instance));
  }
  return keys;
}

/** A property value of a generated instance, by container (`space:externalId`) and container property. */
export function valueIn(instance: Instance, container: string, property: string): unknown {
  return instance.data[container]?.[property] ?? null;
}
