/**
 * Word pools for generated items. Deliberately varied: non-Latin scripts, combining marks, emoji
 * (astral plane), quotes, backslashes, control characters and empty strings, so that every writer
 * downstream is exercised on the text a real industrial tenant holds.
 */

export const EVENT_TYPES = [
  'alarm',
  'maintenance',
  'inspection',
  'failure',
  'production',
  'shutdown',
  'workorder',
  'calibration',
] as const;

export const EVENT_SUBTYPES: Readonly<Record<(typeof EVENT_TYPES)[number], readonly string[]>> = {
  alarm: ['high', 'low', 'high-high', 'low-low', 'deviation'],
  maintenance: ['preventive', 'corrective', 'predictive'],
  inspection: ['visual', 'ultrasonic', 'thermographic', 'vibration'],
  failure: ['mechanical', 'electrical', 'instrument', 'process'],
  production: ['batch', 'continuous', 'test'],
  shutdown: ['planned', 'unplanned', 'emergency'],
  workorder: ['open', 'released', 'completed', 'cancelled'],
  calibration: ['zero', 'span', 'full'],
};

export const SOURCES = ['SAP', 'OSIsoft PI', 'IBM Maximo', 'manual', 'Historian-β', '系统A', 'Ödegaard MES'];

export const ASSET_KINDS = [
  'Pump',
  'Compressor',
  'Valve',
  'Heat exchanger',
  'Separator',
  'Motor',
  'Kompressor',
  'Pompe à chaleur',
  '泵站',
  'Турбина',
  'Tank',
  'Sensor',
];

export const METADATA_KEYS = [
  'site',
  'area',
  'tag',
  'unit',
  'manufacturer',
  'serialNumber',
  'criticality',
  'Ω-factor',
  '温度',
  'émetteur',
  'operator name',
  'work.order',
  'key with "quotes"',
  'ключ',
  'pressure [bar]',
  'notes',
];

export const METADATA_WORDS = [
  'Nordsjø',
  'Åsgard',
  'Ekofisk',
  'Troll A',
  'Zürich',
  'São Paulo',
  '東京',
  'Δp high',
  'naïve café',
  'ok',
  '',
  'value with "double quotes"',
  'back\\slash',
  'line one\nline two',
  'tab\tseparated',
  '🚀 launch',
  '👷‍♀️ crew',
  'e\u0301 combining',
  'null',
  '0',
  '-1.5e3',
  'true',
  '{"not":"parsed"}',
  'بئر النفط',
  'קידוח',
  'जल पंप',
];

export const DESCRIPTIONS = [
  'Routine check completed without findings',
  'Vibration above threshold on drive end bearing',
  'Température élevée détectée au palier',
  'Druckverlust über Filter gestiegen',
  '定期点検を実施しました',
  'Seal leak observed — replaced gasket',
  'Operator note: "check again next shift"',
  'Flow rate < 10 m³/h for 5 min',
  'Alarm acknowledged by ÖLJ',
  'Backslash path C:\\plant\\unit-3',
];

export const LABELS = ['pump', 'critical', 'rotating-equipment', 'offshore', 'onshore', 'ex-zone'];

export const UNITS = ['°C', 'bar', 'm3/h', 'kW', 'rpm', '%', 'mm/s', 'A'];

export const UNIT_EXTERNAL_IDS: Readonly<Record<string, string>> = {
  '°C': 'temperature:deg_c',
  'bar': 'pressure:bar',
  'm3/h': 'volume_flow_rate:m3-per-hr',
  'kW': 'power:kilowatt',
  'rpm': 'angular_velocity:rev-per-min',
};

export const FILE_KINDS = [
  ['pdf', 'application/pdf'],
  ['png', 'image/png'],
  ['dwg', 'application/acad'],
  ['txt', 'text/plain; charset=utf-8'],
  ['xlsx', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'],
] as const;

export const DIRECTORIES = ['/plant/area-10', '/plant/area-20/P&ID', '/documents/manuals', '/データ/報告', '/'];

export const VALUE_TYPES = ['STRING', 'DOUBLE', 'LONG'] as const;

/** Values of string time series: states, operator notes, JSON text, and the awkward cases. */
export const POINT_STRINGS = [
  'OPEN',
  'CLOSED',
  'RUNNING',
  'STOPPED',
  'FAULT',
  'auto',
  'manual',
  '',
  'Ølnivå høy',
  '温度过高',
  '⚠️ trip',
  'valve "A" shut',
  'C:\\plant\\unit-3',
  'line one\nline two',
  '{"mode":"auto","setpoint":42}',
  'NaN',
  '-1.5e3',
  'null',
];
