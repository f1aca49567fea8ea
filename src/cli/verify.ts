import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config/load-config.js';
import { UsageError } from '../errors.js';
import { verifyJob, verifyOutput } from '../export/index.js';
import { silentLogger } from '../log.js';
import { Redactor } from '../util/redact.js';
import { EXIT } from './exit-codes.js';
import { withUsage } from './parse-flags.js';

export const VERIFY_USAGE = `Usage: bulk-extract verify DIR [--json]
       bulk-extract verify --config FILE [--json]

Reads back every shard listed in DIR/_manifest.json and checks that it is there, with the same size,
sha256 and row count (Parquet footer, NDJSON lines); shard files the manifest does not list are
reported too. With --config, the job's output.dir is checked; an s3:// one is downloaded into a
temporary folder first (it needs that much free space). Exit code 0 when everything matches, 1 on
any difference, 2 when DIR is not an output.
`;

const FLAGS = {
  config: { type: 'string', short: 'c' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function runVerify(argv: string[]): Promise<number> {
  const { values, positionals } = withUsage(VERIFY_USAGE, () =>
    parseArgs({ args: argv, strict: true, allowPositionals: true, options: FLAGS }),
  );
  if (values.help) {
    console.log(VERIFY_USAGE);
    return EXIT.OK;
  }
  const [dir, ...extra] = positionals;
  if ((dir === undefined) === (values.config === undefined) || extra.length > 0) {
    throw new UsageError(`expected one output folder, or --config FILE.\n\n${VERIFY_USAGE}`);
  }
  const config = values.config === undefined ? undefined : loadConfig(values.config);
  const redactor = config?.redactor ?? Redactor.none;
  const report = await redactor.guard(() =>
    config === undefined ? verifyOutput(resolve(dir!)) : verifyJob(config, silentLogger),
  );
  const print = (text: string) => console.log(redactor.redact(text));
  if (values.json) {
    print(JSON.stringify(report));
  } else {
    const formats = Object.entries(report.formats).map(
      ([format, { files, rows }]) => `${format}: ${files} files, ${rows.toLocaleString('en-US')} rows`,
    );
    print(`run ${report.state}${report.success ? ', _SUCCESS present' : ''}; ${formats.join('; ') || 'no files'}`);
    print(report.problems.length === 0 ? 'OK: every file matches the manifest' : report.problems.join('\n'));
  }
  return report.problems.length === 0 ? EXIT.OK : EXIT.FAILED;
}
