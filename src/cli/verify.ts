import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config/load-config.js';
import { UsageError } from '../errors.js';
import { type TableReport, verifyJob, verifyOutput, type VerifyReport } from '../export/index.js';
import { silentLogger } from '../log.js';
import { Redactor } from '../util/redact.js';
import { EXIT } from './exit-codes.js';
import { isBucketUrl, needsConfig } from './output-flag.js';
import { withUsage } from './parse-flags.js';

export const VERIFY_USAGE = `Usage: bulk-extract verify DIR [--json]
       bulk-extract verify --config FILE [--json]

Reads back every shard listed in DIR/_manifest.json and checks that it is there, with the same size,
sha256 and row count (Parquet footer, NDJSON lines), and that every row's key (id, or externalId) is
unique in its stream (in its run, for incremental and snapshot streams). A datapoints stream's rows
must lie in its run's window (pointWindow), and each series the checkpoint has in flight must end in
its partition's shards where the checkpoint says. Checks the records against each other too: the
manifest's row counts against its shards', the formats of each shard against each other, the
checkpoint against its digest and the manifest. Shard files the manifest does not list are
reported. With --config, the job's output.dir is checked, a folder or an s3:// bucket (read object
by object: each shard is downloaded into a temporary file while it is checked; the job's
credentials need not be set). Exit code 0 when everything matches, 1 on any difference, 2 when
DIR is not an output.
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
  if (dir !== undefined && isBucketUrl(dir)) throw new UsageError(needsConfig('verify', dir));
  // verify reads the output, never the platform: the job's credentials need not be set.
  const config = values.config === undefined ? undefined : loadConfig(values.config, process.env, {}, 'unused');
  const redactor = config?.redactor ?? Redactor.none;
  const report = await redactor.guard(() =>
    config === undefined ? verifyOutput(resolve(dir!)) : verifyJob(config, silentLogger),
  );
  const print = (text: string) => console.log(redactor.redact(text));
  if (values.json) {
    print(JSON.stringify(report));
  } else {
    print(verdict(report));
  }
  return report.problems.length === 0 ? EXIT.OK : EXIT.FAILED;
}

/** The verdict first (problems, one a line), then what was checked. */
export function verdict(report: VerifyReport): string {
  const formats = Object.entries(report.formats).map(
    ([format, { files, rows }]) => `${format}: ${files} files, ${rows.toLocaleString('en-US')} rows`,
  );
  const checked = [
    `run ${report.state}${report.success ? ', _SUCCESS present' : ''}`,
    formats.join('; ') || 'no files',
    report.keysChecked > 0 ? `${report.keysChecked.toLocaleString('en-US')} keys checked` : 'no keys checked',
    ...(report.changeRows > 0 ? [changeRowsChecked(report.changeRows)] : []),
    report.checkpointChecked ? 'checkpoint compared' : 'no checkpoint found to compare',
    ...Object.entries(report.tables ?? {}).map(([stream, table]) => tableLine(stream, table)),
  ].join('; ');
  const unique = report.keysChecked > 0 ? ', every key is unique' : '';
  if (report.problems.length === 0) return `OK: every file matches the manifest${unique}\n${checked}`;
  const problems = report.problems.map((problem) => `  - ${problem}`);
  return [`FAILED: ${report.problems.length} problem(s)`, ...problems, checked].join('\n');
}

/** A Delta table's latest version, as verify replayed it. */
function tableLine(stream: string, table: TableReport): string {
  const from = table.checkpoint === undefined ? '' : `, from the checkpoint of version ${table.checkpoint}`;
  return `Delta table ${stream}: version ${table.version}, ${table.files} files, ${table.rows.toLocaleString('en-US')} rows${from}`;
}

/** The rows of incremental runs of a change feed (instances, a subscription): each has its key, which may repeat. */
export function changeRowsChecked(rows: number): string {
  return `${rows.toLocaleString('en-US')} rows of change-feed runs (incremental instances, subscriptions) have their key (a key may repeat)`;
}
