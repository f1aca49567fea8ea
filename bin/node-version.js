// The check of the Node.js version that bin/bulk-extract.js makes before it loads anything else.
// Plain JavaScript with nothing newer than ES2018 and no imports, so that an old Node can load it
// and say what it needs instead of failing on syntax or an API it lacks somewhere in dist/.

const RANGE = /^>=\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?$/;
const VERSION = /^v?(\d+)\.(\d+)\.(\d+)/;

/**
 * The one line to print when the Node.js version `found` (process.version, "v20.20.2") is older
 * than `required`, package.json's engines.node; undefined when it is not. `required` has the one
 * form this project writes, ">=MAJOR[.MINOR[.PATCH]]"; another form throws, as does a `found`
 * that is not a version. `node` is the path of the Node that runs (process.execPath), named in the
 * line so that a user sees which of their Node installations was picked.
 */
export function nodeVersionProblem(found, required, node) {
  const range = RANGE.exec(required.trim());
  if (range === null) throw new Error(`engines.node: expected ">=MAJOR[.MINOR[.PATCH]]", got "${required}"`);
  const version = VERSION.exec(found);
  if (version === null) throw new Error(`not a Node.js version: "${found}"`);
  const want = [range[1], range[2], range[3]].map((part) => Number(part ?? 0));
  const have = [version[1], version[2], version[3]].map(Number);
  const index = want.findIndex((part, i) => have[i] !== part);
  if (index === -1 || have[index] > want[index]) return undefined;
  return `bulk-extract: needs Node.js ${required.trim()}, found ${found} (${node}). ` +
    `In a clone, \`npx bulk-extract\` or an npm script runs it on the Node ${want[0]} that npm ci installed ` +
    `(node_modules/.bin/node); else install Node ${want[0]} (README, "Quick start").`;
}
