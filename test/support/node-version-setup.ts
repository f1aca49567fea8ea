/**
 * Vitest's global setup (vitest.config.ts): the suite's first line says which Node.js it runs on,
 * the one `npm ci` installed when run through npm (CONTRIBUTING.md, "Node").
 */
export default function printNodeVersion(): void {
  process.stdout.write(`Node.js ${process.version} (${process.execPath}) runs the tests\n`);
}
