import { column, type ColumnSpec } from './resource.js';

/**
 * The rows of a datapoints stream that follows a subscription: one **change row** per point
 * written and per range deleted, in the order the feed gave them. Columns:
 *
 * - `timeseriesId`, `externalId`: the series (`instanceSpace`, `instanceExternalId` for a series
 *   that lives in the data model);
 * - `change`: `upsert` (the point at `timestamp` now holds `value`/`valueString`, and the status
 *   when asked) or `delete` (every point in `[timestamp, deleteEnd)` is gone);
 * - `timestamp`: an upsert's time, or a deleted range's inclusive begin;
 * - `deleteEnd`: a deleted range's exclusive end (null for an upsert, and for a range with no end);
 * - `value` (numeric series; a bad point's NaN or ±Infinity included) or `valueString` (string series);
 * - `statusCode`, `statusSymbol` with `includeStatus`;
 * - `changeOrder`: the row's place in its partition's feed within the run (0, 1, ...). A series
 *   lies in one partition, so ordering a run's rows of a series by `changeOrder` applies its
 *   changes in the order they were made, across the run's shards; runs apply in the order of
 *   their folders.
 */
export function changeColumns(includeStatus: boolean): ColumnSpec[] {
  const status = includeStatus ? [column('statusCode', 'int64'), column('statusSymbol', 'string')] : [];
  return [
    column('timeseriesId', 'int64', true),
    column('externalId', 'string'),
    column('instanceSpace', 'string'),
    column('instanceExternalId', 'string'),
    column('change', 'string', true),
    column('changeOrder', 'int64', true),
    column('timestamp', 'timestamp', true),
    column('deleteEnd', 'timestamp'),
    column('value', 'double'),
    column('valueString', 'string'),
    ...status,
  ];
}

/** An update of the feed as the change rows read it (the platform's shape). */
export interface ChangeUpdate {
  timeSeries: {
    id: number;
    externalId?: string;
    instanceId?: { space: string; externalId: string };
    isString: boolean;
  };
  upserts: readonly { timestamp: number; value?: number | string; status?: { code: number; symbol?: string } }[];
  deletes: readonly { inclusiveBegin: number; exclusiveEnd?: number }[];
}

export interface ChangeRow {
  timeseriesId: number;
  externalId: string | null;
  instanceSpace: string | null;
  instanceExternalId: string | null;
  change: 'upsert' | 'delete';
  changeOrder: number;
  timestamp: number;
  deleteEnd: number | null;
  value: number | null;
  valueString: string | null;
  statusCode?: number | null;
  statusSymbol?: string | null;
}

/** The JSON texts of a bad numeric point's value, and the doubles they stand for. */
const NON_FINITE: Readonly<Record<string, number>> = { 'NaN': Number.NaN, 'Infinity': Infinity, '-Infinity': -Infinity };

/**
 * The change rows of one update, numbered from `firstOrder`: its deleted ranges first, then its
 * points, as an update that holds both is applied (the platform's ingestion deletes, then writes).
 */
export function changeRows(update: ChangeUpdate, firstOrder: number, includeStatus: boolean): ChangeRow[] {
  const { id, externalId, instanceId, isString } = update.timeSeries;
  const series = {
    timeseriesId: id,
    externalId: externalId ?? null,
    instanceSpace: instanceId?.space ?? null,
    instanceExternalId: instanceId?.externalId ?? null,
  };
  const rows: ChangeRow[] = [];
  for (const range of update.deletes) {
    rows.push({
      ...series,
      change: 'delete',
      changeOrder: firstOrder + rows.length,
      timestamp: range.inclusiveBegin,
      deleteEnd: range.exclusiveEnd ?? null,
      value: null,
      valueString: null,
      ...(includeStatus ? { statusCode: null, statusSymbol: null } : {}),
    });
  }
  for (const point of update.upserts) {
    const { value } = point;
    rows.push({
      ...series,
      change: 'upsert',
      changeOrder: firstOrder + rows.length,
      timestamp: point.timestamp,
      deleteEnd: null,
      value: isString || value === undefined ? null : typeof value === 'number' ? value : (NON_FINITE[value] ?? null),
      valueString: isString && typeof value === 'string' ? value : null,
      // The platform leaves the Good status (code 0) out of a point; a status sent may lack its symbol.
      ...(includeStatus ? statusColumns(point.status) : {}),
    });
  }
  return rows;
}

function statusColumns(status: { code: number; symbol?: string } | undefined): Pick<ChangeRow, 'statusCode' | 'statusSymbol'> {
  return status === undefined ? { statusCode: 0, statusSymbol: 'Good' } : { statusCode: status.code, statusSymbol: status.symbol ?? null };
}
