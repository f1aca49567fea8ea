import type { Principal } from './credentials.js';
import type { ModelsRoute, ResourceRoute } from './routes.js';

/** The platform's access control list that grants reading each collection. */
const READ_ACL: Readonly<Record<ResourceRoute['resource'], string>> = {
  assets: 'assetsAcl',
  events: 'eventsAcl',
  timeseries: 'timeSeriesAcl',
  files: 'filesAcl',
  sequences: 'sequencesAcl',
  relationships: 'relationshipsAcl',
};

/** The capability a route needs: `{acl}:READ` of its collection (datapoints: the time series'). */
export function capabilityOf(route: ResourceRoute | ModelsRoute): string {
  if (!('resource' in route)) return route.action.startsWith('views') ? 'dataModelsAcl:READ' : 'dataModelInstancesAcl:READ';
  return `${READ_ACL[route.resource]}:READ`;
}

/**
 * The capability a request lacks, if any: a credential named in `granted` (the simulator's
 * `capabilities` option) holds only the capabilities listed there; any other holds every one.
 */
export function missingCapability(
  granted: Readonly<Record<string, readonly string[]>>,
  principal: Principal,
  route: ResourceRoute | ModelsRoute,
): string | undefined {
  const held = Object.hasOwn(granted, principal.credential) ? granted[principal.credential] : undefined;
  const needed = capabilityOf(route);
  return held === undefined || held.includes(needed) ? undefined : needed;
}
