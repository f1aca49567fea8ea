import { createRequire } from 'node:module';

/** The package version, read once from package.json (two levels above both src/ and dist/ files). */
export const VERSION: string = (createRequire(import.meta.url)('../package.json') as { version: string }).version;

export const USER_AGENT = `bulk-extract/${VERSION} (node ${process.version})`;
