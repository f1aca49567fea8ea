#!/usr/bin/env node
import { main } from '../dist/cli/main.js';

// The AWS SDK is pinned to the last version for Node 20: its warning that later ones need Node 22 is noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
process.exitCode = await main(process.argv.slice(2));
