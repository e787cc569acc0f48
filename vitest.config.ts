import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // Tests run against the TypeScript sources of the protocol package, not its build output.
    alias: {
      // The SDK's examples import it by name: run them against its sources.
      '@tollgate/sdk/file-journal': fileURLToPath(
        new URL('./packages/sdk/src/file-journal.ts', import.meta.url),
      ),
      '@tollgate/sdk': fileURLToPath(new URL('./packages/sdk/src/index.ts', import.meta.url)),
      // Before '@tollgate/protocol', which would otherwise take this subpath as a prefix match.
      '@tollgate/protocol/wire-schemas': fileURLToPath(
        new URL('./packages/protocol/src/generated/wire-schemas.ts', import.meta.url),
      ),
      '@tollgate/protocol': fileURLToPath(
        new URL('./packages/protocol/src/index.ts', import.meta.url),
      ),
    },
  },
  test: {
    include: ['packages/*/test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Test files share their worker process and its loaded modules: importing the server's
    // modules cost more than the tests themselves in most files (docs/ci.md, "Where the time
    // goes"). No test relies on a fresh module state: the app is built per test from explicit
    // options (services.ts), and a test that changes the environment takes it back (vi.stubEnv).
    isolate: false,
    // Every gateway and CLI process a test starts applies pending migrations itself, on
    // PostgreSQL too (where the shipped default is off: docs/deploy.md, "Migrations"): each test
    // makes its own fresh database or schema, as a developer's box would. The tests of the
    // default and of the refusal set it themselves (test/operations/migrations-as-a-step.test.ts).
    env: { TOLLGATE_MIGRATE_ON_START: '1' },
    // Most test time is spent waiting on child processes, sockets and databases, not computing:
    // vitest's default (one fork fewer than the cores) leaves a 2-core CI machine running one
    // file at a time. Two forks at least (docs/ci.md).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // After vitest's own summary, one line saying why tests were skipped and one closing tally
    // that counts them: `tests: N passed, N failed, N skipped` (docs/ci.md).
    reporters: ['default', './packages/server/test/reporters/skip-summary.ts'],
  },
});
