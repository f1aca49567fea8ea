import type { Resource } from '../resources/index.js';
import type { Principal } from './credentials.js';

/** The platform's access control list that grants reading each collection. */
const READ_ACL: Readonly<Record<Resource, string>> = {
  assets: 'assetsAcl',
  events: 'eventsAcl',
  timeseries: 'timeSeriesAcl',
  files: 'filesAcl',
  sequences: 'sequencesAcl',
  relationships: 'relationshipsAcl',
};

/** The capability that reads a collection, `{acl}:READ`: its list, its count (datapoints: the time series'). */
export function readCapability(resource: Resource): string {
  return `${READ_ACL[resource]}:READ`;
}

/** The capability that reads the data-modeling service's views. */
export const VIEWS_READ = 'dataModelsAcl:READ';
/** The capability that reads its instances: lists, the sync feed, aggregates. */
export const INSTANCES_READ = 'dataModelInstancesAcl:READ';

/**
 * The capability a request lacks, if any: a credential named in `granted` (the simulator's
 * `capabilities` option) holds only the capabilities listed there; any other holds every one.
 */
export function missingCapability(
  granted: Readonly<Record<string, readonly string[]>>,
  principal: Principal,
  needed: string,
): string | undefined {
  const held = Object.hasOwn(granted, principal.credential) ? granted[principal.credential] : undefined;
  return held === undefined || held.includes(needed) ? undefined : needed;
}
