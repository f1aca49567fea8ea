import type { Checkpoint, Manifest, ManifestFile, WindowManifest } from '../state/index.js';

/**
 * What the output's records say of each other, checked without reading a shard: the rows a
 * manifest counts against the sum of its shards' rows, the formats of each shard against each
 * other, and the checkpoint against the manifest, partition by partition. Each problem is one
 * line naming the stream and partition. Pure: `verify` adds what the files themselves hold, and a
 * resumed run refuses a checkpoint and manifest that disagree.
 */
export function recordProblems(
  manifest: Manifest,
  runs: readonly WindowManifest[],
  checkpoint: Checkpoint | undefined,
): string[] {
  const problems: string[] = [];
  for (const [name, stream] of Object.entries(manifest.streams)) {
    const files = manifest.files.filter((file) => file.stream === name);
    problems.push(...sumProblems(`${name}: the manifest`, stream.rows, stream.formats, files));
    for (const file of files) {
      if (file.n !== stream.partitions || file.m > file.n) {
        problems.push(`${file.path}: partition ${file.m} of ${file.n}, but ${name} has ${stream.partitions} partitions`);
      }
    }
  }
  for (const run of runs) {
    const formats = [...new Set(run.files.map((file) => file.format))];
    problems.push(...sumProblems(`${run.stream}/run=${run.run}/_manifest.json`, run.rows, formats, run.files));
  }
  problems.push(...formatProblems([...manifest.files, ...runs.flatMap((run) => run.files)]));
  const parts = checkpoint === undefined ? [] : checkpointProblems(checkpoint, manifest);
  problems.push(...parts.map((problem) => problem.text));
  return problems;
}

/** Each format's shards must hold the rows the record counts. */
function sumProblems(what: string, rows: number, formats: readonly string[], files: readonly ManifestFile[]): string[] {
  return formats.flatMap((format) => {
    const sum = files.filter((file) => file.format === format).reduce((total, file) => total + file.rows, 0);
    return sum === rows ? [] : [`${what} counts ${count(rows)} rows, its ${format} shards ${count(sum)}`];
  });
}

/** Every shard of a partition is written in each format from the same pages: their rows must agree. */
function formatProblems(files: readonly ManifestFile[]): string[] {
  const shards = new Map<string, ManifestFile[]>();
  for (const file of files) {
    const key = `${file.stream}/${file.run ?? ''}/${file.m}/${file.seq}`;
    shards.set(key, [...(shards.get(key) ?? []), file]);
  }
  const problems: string[] = [];
  for (const group of shards.values()) {
    const rows = new Set(group.map((file) => file.rows));
    if (rows.size > 1) {
      const first = group[0];
      const each = group.map((file) => `${file.format} ${count(file.rows)}`).join(', ');
      problems.push(`${first?.stream} partition ${first?.m}/${first?.n} shard ${first?.seq}: the formats disagree (${each} rows)`);
    }
  }
  return problems;
}

/**
 * The checkpoint and the manifest must count the same shards and rows for every partition of the
 * streams both know. Two states a crash leaves are allowed: the manifest one shard ahead while it
 * says `running` (it is written first when shards are added), and a partition the checkpoint has
 * forgotten, at its first page again (it is written first when shards are forgotten: the run
 * reads the partition again, and its listed shards are dropped).
 */
/** A partition whose checkpoint and manifest disagree. */
export interface PartProblem {
  stream: string;
  m: number;
  text: string;
}

export function checkpointProblems(checkpoint: Checkpoint, manifest: Manifest): PartProblem[] {
  const problems: PartProblem[] = [];
  const running = manifest.state === 'running';
  for (const [name, state] of Object.entries(checkpoint.streams)) {
    if (manifest.streams[name] === undefined) continue;
    const files = manifest.files.filter((file) => file.stream === name && (file.run ?? null) === state.run);
    for (const [m, part] of Object.entries(state.parts)) {
      // Read again from its first page: whatever the manifest still lists of it is dropped, never counted.
      const forgotten = part.nextSeq === 0 && part.rows === 0 && part.cursor === null;
      if (forgotten) continue;
      for (const format of state.formats) {
        const own = files.filter((file) => String(file.m) === m && file.format === format);
        const seqs = own.map((file) => file.seq).sort((a, b) => a - b);
        const counted = own.filter((file) => file.seq < part.nextSeq);
        const rows = counted.reduce((sum, file) => sum + file.rows, 0);
        const exact = seqs.length === part.nextSeq && seqs.every((seq, i) => seq === i);
        const ahead = running && seqs.length === part.nextSeq + 1 && seqs.every((seq, i) => seq === i);
        const where = `${name} partition ${m}/${state.partitions} (${format})`;
        const at = { stream: name, m: Number(m) };
        if (!exact && !ahead) {
          problems.push({ ...at, text: `${where}: the checkpoint counts ${part.nextSeq} shard(s), the manifest lists ${describeSeqs(seqs)}` });
        } else if (rows !== part.rows) {
          problems.push({ ...at, text: `${where}: the checkpoint counts ${count(part.rows)} rows, the manifest's shards ${count(rows)}` });
        }
      }
    }
  }
  return problems;
}

function describeSeqs(seqs: readonly number[]): string {
  if (seqs.length === 0) return 'none';
  const shown = seqs.slice(0, 6).join(', ') + (seqs.length > 6 ? ', ...' : '');
  return `${seqs.length} (sequence numbers ${shown})`;
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}
