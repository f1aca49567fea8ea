import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    globalSetup: ['test/support/node-version-setup.ts'],
    // One test file at a time on 2 cores (Vitest 4's default in run mode: os.availableParallelism() - 1
    // workers). The files spawn CLI processes and simulators that use the second core already: with
    // two workers each file took about twice as long (the torture 260 s against 114 s) for about 1.2x
    // more files an hour, at the price of the slowest files' margins (CONTRIBUTING.md, "Tests").
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
