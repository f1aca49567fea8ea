/**
 * The data model the simulator serves under `/models/...`: containers and views modelled on the
 * platform's Core Data Model (system space `cdf_cdm`, version `v1`), with a few properties of our
 * own so that every property type the platform has is present (int32, int64, float32, float64,
 * date, json, lists of numbers), and one user-space view for the edges. Static: it never changes.
 */

/** The platform's property types (`type.type` in a view or container definition). */
export type ScalarType = 'text' | 'int32' | 'int64' | 'float32' | 'float64' | 'boolean' | 'timestamp' | 'date' | 'json';
export type PropertyKind = ScalarType | 'direct' | 'enum';

export interface ViewId {
  space: string;
  externalId: string;
  version: string;
}

export interface ContainerId {
  space: string;
  externalId: string;
}

export interface ContainerProperty {
  identifier: string;
  type: PropertyKind;
  list: boolean;
  nullable: boolean;
  name: string;
  description?: string;
  /** An enum's values (`type: 'enum'`). */
  values?: readonly string[];
}

export interface ContainerDefinition extends ContainerId {
  name: string;
  description: string;
  usedFor: 'node' | 'edge' | 'all';
  properties: readonly ContainerProperty[];
}

/** A view property mapped to a container property; `source` is the hint of a direct relation. */
export interface MappedProperty {
  identifier: string;
  container: ContainerId;
  containerPropertyIdentifier: string;
  source?: ViewId;
}

/** A reverse direct relation: read-only, no values of its own (instances never carry it). */
export interface ReverseConnection {
  identifier: string;
  connectionType: 'multi_reverse_direct_relation' | 'single_reverse_direct_relation';
  source: ViewId;
  through: { source: ViewId; identifier: string };
  targetsList: boolean;
  description: string;
}

export interface ViewDefinition extends ViewId {
  name: string;
  description: string;
  usedFor: 'node' | 'edge' | 'all';
  isGlobal: boolean;
  implements: readonly ViewId[];
  /** The view's own mapped properties; those of `implements` come first when inherited ones are included. */
  properties: readonly MappedProperty[];
  connections: readonly ReverseConnection[];
}

export const CORE_SPACE = 'cdf_cdm';
/** The user space of the edges' view and of the node and edge types. */
export const SIM_SPACE = 'sim_model';
export const VERSION = 'v1';
/** When the model was "created": views and containers carry it as createdTime and lastUpdatedTime. */
export const MODEL_TIME_MS = Date.UTC(2024, 5, 1);

const core = (externalId: string): ContainerId => ({ space: CORE_SPACE, externalId });
const view = (externalId: string, space = CORE_SPACE): ViewId => ({ space, externalId, version: VERSION });

function prop(identifier: string, type: PropertyKind, options: Partial<ContainerProperty> = {}): ContainerProperty {
  return { identifier, type, list: false, nullable: true, name: identifier, ...options };
}

export const CONTAINERS: readonly ContainerDefinition[] = [
  {
    ...core('CogniteDescribable'),
    name: 'CogniteDescribable',
    description: 'Names, descriptions, tags and aliases.',
    usedFor: 'all',
    properties: [
      prop('name', 'text'),
      prop('description', 'text'),
      prop('tags', 'text', { list: true }),
      prop('aliases', 'text', { list: true }),
    ],
  },
  {
    ...core('CogniteSourceable'),
    name: 'CogniteSourceable',
    description: 'Where the data came from.',
    usedFor: 'node',
    properties: [
      prop('sourceId', 'text'),
      prop('sourceContext', 'text'),
      prop('sourceCreatedTime', 'timestamp'),
      prop('sourceUpdatedTime', 'timestamp'),
    ],
  },
  {
    ...core('CogniteSchedulable'),
    name: 'CogniteSchedulable',
    description: 'Start and end times, actual and scheduled.',
    usedFor: 'node',
    properties: [
      prop('startTime', 'timestamp'),
      prop('endTime', 'timestamp'),
      prop('scheduledStartTime', 'timestamp'),
      prop('scheduledEndTime', 'timestamp'),
    ],
  },
  {
    ...core('CogniteAsset'),
    name: 'CogniteAsset',
    description: 'The asset hierarchy, and (simulator) criticality, installation and attributes.',
    usedFor: 'node',
    properties: [
      prop('assetHierarchy_parent', 'direct'),
      prop('assetHierarchy_root', 'direct', { nullable: false }),
      prop('assetHierarchy_path', 'direct', { list: true }),
      prop('assetHierarchy_path_last_updated_time', 'timestamp'),
      prop('criticality', 'int32'),
      prop('installationDate', 'date'),
      prop('operational', 'boolean'),
      prop('extendedAttributes', 'json'),
    ],
  },
  {
    ...core('CogniteActivity'),
    name: 'CogniteActivity',
    description: 'What an activity concerns, and (simulator) its work order and hours.',
    usedFor: 'node',
    properties: [
      prop('assets', 'direct', { list: true }),
      prop('timeSeries', 'direct', { list: true }),
      prop('workOrderNumber', 'int64'),
      prop('laborHours', 'float32'),
    ],
  },
  {
    ...core('CogniteTimeSeries'),
    name: 'CogniteTimeSeries',
    description: 'A time series: its kind, unit and assets, and (simulator) its sampling and thresholds.',
    usedFor: 'node',
    properties: [
      prop('isStep', 'boolean', { nullable: false }),
      prop('type', 'enum', { nullable: false, values: ['numeric', 'string'] }),
      prop('sourceUnit', 'text'),
      prop('assets', 'direct', { list: true }),
      prop('sampleRateHz', 'float64'),
      prop('thresholds', 'float64', { list: true }),
    ],
  },
  {
    space: SIM_SPACE,
    externalId: 'ActivityLink',
    name: 'ActivityLink',
    description: 'The properties of an edge from an asset to an activity.',
    usedFor: 'edge',
    properties: [prop('role', 'text'), prop('weight', 'float64'), prop('linkedTime', 'timestamp')],
  },
];

/** The mapped properties of a view: each container property under its own name unless overridden. */
type Overrides = Partial<Record<string, Partial<MappedProperty>>>;

function mapped(container: string, names: readonly string[], extra: Overrides = {}) {
  return names.map((identifier): MappedProperty => {
    const more = extra[identifier] ?? {};
    return { identifier, container: core(container), containerPropertyIdentifier: identifier, ...more };
  });
}

function reverse(identifier: string, source: ViewId, throughProperty: string, targetsList: boolean): ReverseConnection {
  return {
    identifier,
    connectionType: 'multi_reverse_direct_relation',
    source,
    through: { source, identifier: throughProperty },
    targetsList,
    description: `The ${source.externalId} nodes whose ${throughProperty} point here.`,
  };
}

const ASSET = view('CogniteAsset');
const ACTIVITY = view('CogniteActivity');
const TIME_SERIES = view('CogniteTimeSeries');

function coreView(externalId: string, description: string, rest: Partial<ViewDefinition>): ViewDefinition {
  return {
    ...view(externalId),
    name: externalId,
    description,
    usedFor: 'node',
    isGlobal: true,
    implements: [],
    properties: [],
    connections: [],
    ...rest,
  };
}

export const VIEWS: readonly ViewDefinition[] = [
  coreView('CogniteDescribable', 'Names, descriptions, tags and aliases.', {
    usedFor: 'all',
    properties: mapped('CogniteDescribable', ['name', 'description', 'tags', 'aliases']),
  }),
  coreView('CogniteSourceable', 'Where the data came from.', {
    properties: mapped('CogniteSourceable', ['sourceId', 'sourceContext', 'sourceCreatedTime', 'sourceUpdatedTime']),
  }),
  coreView('CogniteSchedulable', 'Start and end times, actual and scheduled.', {
    properties: mapped('CogniteSchedulable', ['startTime', 'endTime', 'scheduledStartTime', 'scheduledEndTime']),
  }),
  coreView('CogniteAsset', 'An asset in the asset hierarchy.', {
    implements: [view('CogniteDescribable'), view('CogniteSourceable')],
    properties: [
      ...mapped('CogniteAsset', ['parent', 'root', 'path', 'pathLastUpdatedTime'], {
        parent: { containerPropertyIdentifier: 'assetHierarchy_parent', source: ASSET },
        root: { containerPropertyIdentifier: 'assetHierarchy_root', source: ASSET },
        path: { containerPropertyIdentifier: 'assetHierarchy_path', source: ASSET },
        pathLastUpdatedTime: { containerPropertyIdentifier: 'assetHierarchy_path_last_updated_time' },
      }),
      ...mapped('CogniteAsset', ['criticality', 'installationDate', 'operational', 'extendedAttributes']),
    ],
    connections: [
      reverse('children', ASSET, 'parent', false),
      reverse('activities', ACTIVITY, 'assets', true),
      reverse('timeSeries', TIME_SERIES, 'assets', true),
    ],
  }),
  coreView('CogniteActivity', 'Work on assets: a work order, an inspection, maintenance.', {
    implements: [view('CogniteDescribable'), view('CogniteSourceable'), view('CogniteSchedulable')],
    properties: mapped('CogniteActivity', ['assets', 'timeSeries', 'workOrderNumber', 'laborHours'], {
      assets: { source: ASSET },
      timeSeries: { source: TIME_SERIES },
    }),
  }),
  coreView('CogniteTimeSeries', 'A series of measurements of one quantity.', {
    implements: [view('CogniteDescribable'), view('CogniteSourceable')],
    properties: mapped('CogniteTimeSeries', ['isStep', 'type', 'sourceUnit', 'assets', 'sampleRateHz', 'thresholds'], {
      assets: { source: ASSET },
    }),
    connections: [reverse('activities', ACTIVITY, 'timeSeries', true)],
  }),
  {
    ...view('ActivityLink', SIM_SPACE),
    name: 'ActivityLink',
    description: 'An edge from an asset to an activity on it.',
    usedFor: 'edge',
    isGlobal: false,
    implements: [],
    properties: ['role', 'weight', 'linkedTime'].map((identifier) => ({
      identifier,
      container: { space: SIM_SPACE, externalId: 'ActivityLink' },
      containerPropertyIdentifier: identifier,
    })),
    connections: [],
  },
];
