import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The benchmark smoke run in CI (bench/smoke.sh) is only worth something if a benchmark that
 * answers errors fails it: bench/check-harness-results.mjs reads the reference harness's
 * results.json. These cases prove it refuses each way a run can stop measuring the accounted path.
 */
const checker = fileURLToPath(
  new URL('../../../../bench/check-harness-results.mjs', import.meta.url),
);
const work = mkdtempSync(path.join(tmpdir(), 'bench-check-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const cleanPhase = {
  ok: 100,
  errors: 0,
  non2xx: 0,
  dropped: 0,
  badStream: 0,
  statusCounts: { 200: 100 },
};
const verify = { chat: { ok: true }, stream: { ok: true }, embeddings: { ok: true } };

function results(
  overrides: { phase?: object; verify?: object; unavailable?: string } = {},
): object {
  return {
    rows: [
      {
        name: 'tollgate',
        unavailable: overrides.unavailable ?? null,
        verify: overrides.verify ?? verify,
      },
    ],
    raw: {
      tollgate: {
        name: 'tollgate',
        rounds: [{ rate100: { ...cleanPhase, ...overrides.phase }, stream: cleanPhase }],
      },
    },
  };
}

function check(content: object): { status: number | null; output: string } {
  const file = path.join(work, `${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(content));
  const run = spawnSync(process.execPath, [checker, file], { encoding: 'utf8' });
  return { status: run.status, output: run.stdout + run.stderr };
}

describe('a benchmark run that answered errors fails the smoke check', () => {
  it('passes a run where every answer was 2xx', () => {
    expect(check(results()).status).toBe(0);
  });

  it.each([
    [
      'a non-2xx answer (e.g. 429 from a limit that binds)',
      { non2xx: 3, statusCounts: { 200: 97, 429: 3 } },
    ],
    ['a transport error', { errors: 1 }],
    ['a cut stream', { badStream: 1 }],
    ['a phase in which nothing succeeded', { ok: 0, statusCounts: {} }],
  ])('fails on %s', (_, phase) => {
    const run = check(results({ phase }));
    expect(run.status).toBe(1);
    expect(run.output).toContain('did not measure cleanly');
  });

  it('fails when the verification of the accounted path failed', () => {
    expect(check(results({ verify: { ...verify, stream: { ok: false } } })).status).toBe(1);
  });

  it('fails when the gateway could not be started', () => {
    expect(check(results({ unavailable: 'did not become ready' })).status).toBe(1);
  });
});
