import type { ViewDefinition } from './core-model.js';
import { containerKey, mappedContainers, viewKey } from './model-lookup.js';
import type { Instance } from './instance-store.js';
import type { SelectedSource } from './view-json.js';

const viewContainers = new Map<ViewDefinition, readonly string[]>();

/** The containers a view maps (`space:externalId`), computed once per view. */
export function containerKeysOf(view: ViewDefinition): readonly string[] {
  let keys = viewContainers.get(view);
  if (keys === undefined) {
    keys = mappedContainers(view).map(containerKey);
    viewContainers.set(view, keys);
  }
  return keys;
}

/** Whether the instance has data in every one of the containers (the meaning of `hasData`). */
export function hasDataIn(instance: Pick<Instance, 'containers'>, containers: readonly string[]): boolean {
  return containers.every((key) => instance.containers.includes(key));
}

/**
 * An instance in the platform's JSON: its identity, times and version, `type` (nodes that have
 * one, every edge), `startNode`/`endNode` (edges), `deletedTime` (only where the answer shows
 * deleted instances: the sync feed), and under `properties` the selected properties of each source
 * view it has data in, nested `{space: {"externalId/version": {property: value}}}`. A property
 * without a value is `null`.
 */
export function instanceJson(
  instance: Instance,
  sources: readonly SelectedSource[],
  showDeleted: boolean,
): Record<string, unknown> {
  const properties: Record<string, Record<string, Record<string, unknown>>> = {};
  for (const { view, properties: selected } of sources) {
    if (!hasDataIn(instance, containerKeysOf(view))) continue;
    const values: Record<string, unknown> = {};
    for (const p of selected) {
      values[p.identifier] = instance.data[containerKey(p.container)]?.[p.containerPropertyIdentifier] ?? null;
    }
    (properties[view.space] ??= {})[viewKey(view)] = values;
  }
  return {
    instanceType: instance.instanceType,
    space: instance.space,
    externalId: instance.externalId,
    version: instance.version,
    ...(instance.type === undefined ? {} : { type: instance.type }),
    ...(instance.startNode === undefined ? {} : { startNode: instance.startNode, endNode: instance.endNode }),
    createdTime: instance.createdTime,
    lastUpdatedTime: instance.lastUpdatedTime,
    ...(showDeleted && instance.deletedTime !== undefined ? { deletedTime: instance.deletedTime } : {}),
    properties,
  };
}
