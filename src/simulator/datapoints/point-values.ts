import { hash3 } from '../random.js';
import { POINT_STRINGS } from '../dataset/vocabulary.js';

/**
 * The value and the status of point k of a series, each a pure function of (series key, k), so
 * that every point is produced in O(1) without the ones before it.
 */

/** A status as the platform sends it: a 32-bit OPC UA code and its symbol. Good (code 0) is never sent. */
export interface PointStatus {
  code: number;
  symbol: string;
}

/**
 * A value as it travels in JSON: a number, a string (string series), or for a bad numeric point the
 * text `"NaN"`, `"Infinity"` or `"-Infinity"`; undefined for a bad string point without a value.
 */
export type PointValue = number | string | undefined;

/** The quality of a point, the category of its status code. */
export type Quality = 'good' | 'uncertain' | 'bad';

/** What the values of one series are made of; drawn once per series from the seed. */
export interface ValueShape {
  /** The series' own hash key: every per-point draw starts from it. */
  key: number;
  isString: boolean;
  isStep: boolean;
  /** Share of the points that are not Good (uncertain or bad); 0 for most series. */
  badShare: number;
  /** Numeric series: the middle of the values, the swing around it, and its period in points. */
  level: number;
  amplitude: number;
  period: number;
  phase: number;
  /** Numeric values are rounded to 1/resolution (10^decimals), as an instrument reports them. */
  resolution: number;
  /** Step and string series keep a value for this many points before it may change. */
  runLength: number;
}

/** Status codes of the OPC UA standard the platform uses (codes from its StatusCode table). */
const UNCERTAIN: readonly PointStatus[] = [
  { code: 0x40000000, symbol: 'Uncertain' },
  { code: 0x40900000, symbol: 'UncertainLastUsableValue' },
  { code: 0x408f0000, symbol: 'UncertainNoCommunicationLastUsableValue' },
];
const BAD: readonly PointStatus[] = [
  { code: 0x80000000, symbol: 'Bad' },
  { code: 0x808b0000, symbol: 'BadDeviceFailure' },
  { code: 0x808c0000, symbol: 'BadSensorFailure' },
  { code: 0x808d0000, symbol: 'BadOutOfService' },
];

/** The non-finite values a bad numeric point may carry, as JSON text values. */
const NON_FINITE = ['NaN', 'Infinity', '-Infinity'] as const;

const TWO_32 = 4_294_967_296;
const SALT_JITTER = 1;
const SALT_STATUS = 2;
const SALT_VALUE = 3;
const SALT_RUN = 4;

/** A 32-bit draw for point k (k may pass 2^32) under one salt. */
export function pointHash(key: number, k: number, salt: number): number {
  return hash3(key, k % TWO_32, salt ^ Math.imul(Math.floor(k / TWO_32), 0x27d4eb2d));
}

/** The offset of point k inside its step, 0 <= jitter < step: what makes the timestamps irregular. */
export function jitterOf(shape: ValueShape, k: number, step: number): number {
  return step <= 1 ? 0 : pointHash(shape.key, k, SALT_JITTER) % step;
}

export function qualityOf(shape: ValueShape, k: number): Quality {
  if (shape.badShare === 0) return 'good';
  const draw = pointHash(shape.key, k, SALT_STATUS);
  if (draw / TWO_32 >= shape.badShare) return 'good';
  // The low bits are independent of the high ones that decided above: 60% bad, 40% uncertain.
  return (draw & 0xff) < 154 ? 'bad' : 'uncertain';
}

/** The status the platform shows for point k (with includeStatus); undefined for Good. */
export function statusOf(shape: ValueShape, k: number): PointStatus | undefined {
  const quality = qualityOf(shape, k);
  if (quality === 'good') return undefined;
  const codes = quality === 'bad' ? BAD : UNCERTAIN;
  return codes[(pointHash(shape.key, k, SALT_STATUS) >>> 8) % codes.length];
}

/**
 * Point k's value. Good and uncertain numeric points are finite; a bad numeric point is mostly
 * non-finite, a bad string point mostly has no value.
 */
export function valueOf(shape: ValueShape, k: number): PointValue {
  const quality = qualityOf(shape, k);
  if (quality === 'bad') {
    const draw = pointHash(shape.key, k, SALT_VALUE) % 10;
    if (shape.isString) return draw < 7 ? undefined : stringAt(shape, k);
    return draw < 8 ? NON_FINITE[draw % 3] : numberAt(shape, k);
  }
  return shape.isString ? stringAt(shape, k) : numberAt(shape, k);
}

function stringAt(shape: ValueShape, k: number): string {
  const run = pointHash(shape.key, Math.floor(k / shape.runLength), SALT_RUN);
  return POINT_STRINGS[run % POINT_STRINGS.length] ?? '';
}

function numberAt(shape: ValueShape, k: number): number {
  const { level, amplitude, resolution } = shape;
  let value: number;
  if (shape.isStep) {
    // A setpoint or a state: one of five levels, held for a run of points.
    const run = pointHash(shape.key, Math.floor(k / shape.runLength), SALT_RUN);
    value = level + amplitude * ((run % 5) - 2);
  } else {
    const noise = pointHash(shape.key, k, SALT_VALUE) / TWO_32 - 0.5;
    value = level + amplitude * (Math.sin((2 * Math.PI * k) / shape.period + shape.phase) + 0.1 * noise);
  }
  // + 0 turns a rounded -0 into 0: JSON has no -0, and a reader could not give it back.
  return Math.round(value * resolution) / resolution + 0;
}

/** The quality a status says, by its code's category (OPC UA: the top two bits); Good without one. */
export function qualityOfStatus(status: PointStatus | undefined): Quality {
  const code = status?.code ?? 0;
  if (code >= 0x80000000) return 'bad';
  return code >= 0x40000000 ? 'uncertain' : 'good';
}
