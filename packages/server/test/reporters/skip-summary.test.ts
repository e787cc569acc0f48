import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The risk: a run without PostgreSQL and Redis ends with "N passed" and nothing else, so a third
 * of the suite silently never ran — or a run that failed outside any test (a file that did not
 * load, a failing hook) closes with "0 failed". A child vitest runs fixture files with the real
 * reporters and its closing lines are checked word for word.
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const config = 'packages/server/test/reporters/fixtures/vitest.fixture.config.ts';

function childRun(filter: string | string[], extraEnv: Record<string, string> = {}) {
  const filters = typeof filter === 'string' ? [filter] : filter;
  const result = spawnSync(
    process.execPath,
    [path.join(root, 'node_modules/vitest/vitest.mjs'), 'run', '--config', config, ...filters],
    {
      cwd: root,
      // A clean environment: no service URLs, no CI, nothing of the parent vitest.
      env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...extraEnv },
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
  const lines = result.stdout.trimEnd().split('\n');
  return { status: result.status, lines, output: `${result.stdout}\n${result.stderr}` };
}

describe('the closing summary of a test run', () => {
  it('a green run without services says how many were skipped and why, on its last two lines', () => {
    const run = childRun('passing');
    expect(run.status, run.output).toBe(0);
    expect(run.lines.slice(-2)).toEqual([
      'skipped: 4 (3 PostgreSQL: TOLLGATE_TEST_PG_URL is not set; 1 Redis: TOLLGATE_TEST_REDIS_URL is not set)',
      'tests: 2 passed, 0 failed, 4 skipped',
    ]);
    expect(run.output).toContain('*** PostgreSQL suites SKIPPED: TOLLGATE_TEST_PG_URL is not set');
    // Said at the start too, before the file's result, for a run stopped before its end.
    const early = run.lines.findIndex((line) =>
      line.startsWith(
        '*** PostgreSQL suites are being skipped in this run: TOLLGATE_TEST_PG_URL is not set',
      ),
    );
    const result = run.lines.findIndex((line) => line.includes('passing.fixture.ts'));
    expect(early, run.output).toBeGreaterThanOrEqual(0);
    expect(early, run.output).toBeLessThan(result);
    // The form CI reads: one word and a colon may stand before `N passed, N failed, N skipped`.
    expect(run.lines.at(-1)).toMatch(/^(\w+: )?\d+ passed, \d+ failed(, \d+ skipped)?$/);
  });

  it('a run of several files without a service announces it once, and gives one skip count', () => {
    const run = childRun(['passing', 'second-store']);
    expect(run.status, run.output).toBe(0);
    const banners = (service: string) =>
      run.output.split(`*** ${service} suites SKIPPED:`).length - 1;
    expect(banners('PostgreSQL'), run.output).toBe(1);
    expect(banners('Redis'), run.output).toBe(1);
    const early = (service: string) =>
      run.output.split(`*** ${service} suites are being skipped in this run:`).length - 1;
    expect(early('PostgreSQL'), run.output).toBe(1);
    expect(early('Redis'), run.output).toBe(1);
    expect(run.lines.at(-1)).toBe('tests: 3 passed, 0 failed, 5 skipped');
    // vitest's own summary counts the same skipped tests (ANSI colours aside).
    const plain = run.output.replace(new RegExp(String.raw`\u001b\[[0-9;]*m`, 'g'), '');
    expect(plain).toMatch(/Tests\s+3 passed \| 5 skipped \(8\)/);
  });

  it('counts a failing hook as a failure, and the tests it kept from running as skipped', () => {
    const run = childRun('mixed');
    expect(run.status).toBe(1);
    expect(run.lines.slice(-3)).toEqual([
      'skipped: 4 (2 PostgreSQL: TOLLGATE_TEST_PG_URL is not set; 1 skip, skipIf or todo in a test file; 1 not run: a hook of their suite failed)',
      'failed outside a test: 1 (packages/server/test/reporters/fixtures/mixed.fixture.ts > a suite whose hook fails: a hook failed)',
      'tests: 2 passed, 2 failed, 4 skipped',
    ]);
  });

  it('under CI a missing service fails the run, and the tally says failed', () => {
    const run = childRun('passing', { CI: 'true' });
    expect(run.status).toBe(1);
    expect(run.output).toContain('CI requires PostgreSQL.');
    expect(run.lines.at(-1)).toBe('tests: 0 passed, 1 failed, 0 skipped');
  });
});
