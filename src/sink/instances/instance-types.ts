/**
 * export/state/manifest.ts's name for typedColumns (parquet/schemas.ts), until it takes typedColumns
 * from sink/index.ts.
 */
export { typedColumns as instanceTypedColumns } from '../parquet/schemas.js';
