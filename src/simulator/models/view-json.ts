import {
  type ContainerId,
  type ContainerProperty,
  type MappedProperty,
  MODEL_TIME_MS,
  type ReverseConnection,
  type ViewDefinition,
  type ViewId,
} from './core-model.js';
import { containerProperty, mappedContainers, viewKey, viewProperties } from './model-lookup.js';

/**
 * The data model in the platform's JSON: a view as `/models/views` answers it, and the `typing`
 * an instances answer carries with `includeTyping: true`.
 */
export function viewReference(id: ViewId): Record<string, string> {
  return { type: 'view', space: id.space, externalId: id.externalId, version: id.version };
}

export function containerReference(id: ContainerId): Record<string, string> {
  return { type: 'container', space: id.space, externalId: id.externalId };
}

/** `type` of a property definition: `{type, list, ...}` with what each kind carries besides. */
function typeJson(p: ContainerProperty, source: ViewId | undefined): Record<string, unknown> {
  const list = p.list ? { list: true, maxListSize: 1000 } : { list: false };
  switch (p.type) {
    case 'text':
      return { type: 'text', ...list, collation: 'ucs_basic' };
    case 'direct':
      return { type: 'direct', ...list, ...(source === undefined ? {} : { source: viewReference(source) }) };
    case 'enum':
      return {
        type: 'enum',
        values: Object.fromEntries((p.values ?? []).map((value) => [value, { name: value, description: `A ${value} series.` }])),
      };
    default:
      return { type: p.type, ...list };
  }
}

/** What typing says of a property: its type and core definition (no container). */
export function propertyTyping(mappedProperty: MappedProperty): Record<string, unknown> {
  const p = containerProperty(mappedProperty.container, mappedProperty.containerPropertyIdentifier);
  return {
    type: typeJson(p, mappedProperty.source),
    nullable: p.nullable,
    immutable: false,
    autoIncrement: false,
    name: mappedProperty.identifier,
    ...(p.description === undefined ? {} : { description: p.description }),
  };
}

function mappedJson(mappedProperty: MappedProperty): Record<string, unknown> {
  return {
    container: containerReference(mappedProperty.container),
    containerPropertyIdentifier: mappedProperty.containerPropertyIdentifier,
    ...propertyTyping(mappedProperty),
  };
}

function connectionJson(connection: ReverseConnection): Record<string, unknown> {
  return {
    connectionType: connection.connectionType,
    source: viewReference(connection.source),
    through: { source: viewReference(connection.through.source), identifier: connection.through.identifier },
    targetsList: connection.targetsList,
    name: connection.identifier,
    description: connection.description,
  };
}

/** A view as `GET /models/views` and `POST /models/views/byids` answer it. */
export function viewJson(definition: ViewDefinition, includeInheritedProperties: boolean): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const p of viewProperties(definition, includeInheritedProperties)) properties[p.identifier] = mappedJson(p);
  for (const c of definition.connections) properties[c.identifier] = connectionJson(c);
  return {
    space: definition.space,
    externalId: definition.externalId,
    version: definition.version,
    name: definition.name,
    description: definition.description,
    implements: definition.implements.map(viewReference),
    createdTime: MODEL_TIME_MS,
    lastUpdatedTime: MODEL_TIME_MS,
    writable: true,
    queryable: true,
    usedFor: definition.usedFor,
    isGlobal: definition.isGlobal,
    properties,
    mappedContainers: mappedContainers(definition).map(containerReference),
  };
}

/** A source of an answer: a view and the properties of it to return (all of them when undefined). */
export interface SelectedSource {
  view: ViewDefinition;
  properties: readonly MappedProperty[];
}

/** `typing` of an answer: `{space: {"externalId/version": {property: definition}}}` for the selected properties. */
export type Typing = Record<string, Record<string, Record<string, unknown>>>;

export function typingJson(sources: readonly SelectedSource[]): Typing {
  const typing: Typing = {};
  for (const { view, properties } of sources) {
    const space = (typing[view.space] ??= {});
    const entries = (space[viewKey(view)] ??= {});
    for (const p of properties) entries[p.identifier] = propertyTyping(p);
  }
  return typing;
}
