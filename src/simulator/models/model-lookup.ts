import {
  type ContainerDefinition,
  type ContainerId,
  type ContainerProperty,
  CONTAINERS,
  type MappedProperty,
  type ViewDefinition,
  type ViewId,
  VIEWS,
} from './core-model.js';

/** Lookups in the simulated data model: containers and views by id, a view's properties and containers. */

/** `space:externalId`, the key of a container in instance data and in lookups. */
export function containerKey(id: ContainerId): string {
  return `${id.space}:${id.externalId}`;
}

/** `externalId/version`, as the platform keys a view's properties inside an instance. */
export function viewKey(id: ViewId): string {
  return `${id.externalId}/${id.version}`;
}

export function findView(id: ViewId): ViewDefinition | undefined {
  return VIEWS.find((v) => v.space === id.space && v.externalId === id.externalId && v.version === id.version);
}

export function findContainer(id: ContainerId): ContainerDefinition | undefined {
  return CONTAINERS.find((c) => c.space === id.space && c.externalId === id.externalId);
}

/** A container's property by identifier; the model is static, so a miss is a bug. */
export function containerProperty(id: ContainerId, identifier: string): ContainerProperty {
  const found = findContainer(id)?.properties.find((p) => p.identifier === identifier);
  if (found === undefined) throw new Error(`no property ${identifier} in container ${containerKey(id)}`);
  return found;
}

/**
 * The view's mapped properties: with `inherited`, those of the views it implements first (in
 * `implements` order, recursively), a property of the view itself replacing an inherited one of
 * the same name.
 */
export function viewProperties(definition: ViewDefinition, inherited = true): MappedProperty[] {
  const byName = new Map<string, MappedProperty>();
  if (inherited) {
    for (const parent of definition.implements) {
      const found = findView(parent);
      for (const p of found === undefined ? [] : viewProperties(found)) byName.set(p.identifier, p);
    }
  }
  for (const p of definition.properties) byName.set(p.identifier, p);
  return [...byName.values()];
}

/** The containers a view maps properties of (inherited ones included), each once, in order. */
export function mappedContainers(definition: ViewDefinition): ContainerId[] {
  const seen = new Map<string, ContainerId>();
  for (const p of viewProperties(definition)) seen.set(containerKey(p.container), p.container);
  return [...seen.values()];
}
