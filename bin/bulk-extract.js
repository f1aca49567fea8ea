#!/usr/bin/env node
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// The AWS SDK is pinned to the last version for Node 20: its warning that later ones need Node 22 is noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

// A clone runs dist/, which `npm ci` builds (the prepare script); without it, say so instead of a stack trace.
const entry = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  console.error(`bulk-extract: not built: ${fileURLToPath(entry)} is missing. Run npm ci (it builds dist/) or npm run build in ${root}.`);
  process.exit(2);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
