import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    globalSetup: ['test/support/node-version-setup.ts'],
    // Two test files at a time. Vitest 4's default in run mode is os.availableParallelism() - 1
    // workers (resolveMaxWorkers in vitest's cli-api chunk): one on a 2-core machine, which runs
    // the files one after another (the files' own times then add up to nearly the whole run). Most
    // files wait on the CLI processes they spawn, on loopback and on the disk, so a second file
    // fills the core the first leaves idle. CONTRIBUTING.md ("Tests") has the figures.
    maxWorkers: 2,
    // Generous, so that the suite passes on a 2-core machine busy with other work (CONTRIBUTING.md,
    // "Tests"): most tests take well under a second, the CLI and crash tests seconds each; a test
    // that hangs still fails, later. Tests that need more say so.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    env: {
      // An export started without it starts itself again with it (bin/allocator.js): set here, each
      // CLI export of the suite starts Node once instead of twice (~0.1 s of CPU each), with the
      // same allocator. test/cli/allocator.test.ts removes it to test the restart.
      MALLOC_ARENA_MAX: '1',
    },
  },
});
