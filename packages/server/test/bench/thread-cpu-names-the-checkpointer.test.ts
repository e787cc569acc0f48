import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * bench/profile.sh prints each thread's on-CPU time beside the profile, because the profile
 * counts the WAL checkpointer's fsync waits as busy time. The risks: charging the main thread's
 * own WAL writes to the checkpointer, or misreading /proc's stat line.
 */
const script = fileURLToPath(new URL('../../../../bench/thread-cpu.mjs', import.meta.url));
const work = mkdtempSync(path.join(tmpdir(), 'bench-threads-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function run(...args: string[]): { status: number | null; output: string } {
  const result = spawnSync(process.execPath, [script, ...args], { encoding: 'utf8' });
  return { status: result.status, output: result.stdout + result.stderr };
}

function snapshotFile(name: string, threads: Record<string, [number, number]>): string {
  const file = path.join(work, `${name}.json`);
  const entries = Object.entries(threads).map(([tid, [ticks, written]]) => [
    tid,
    { ticks, written },
  ]);
  writeFileSync(file, JSON.stringify({ pid: '100', threads: Object.fromEntries(entries) }));
  return file;
}

describe('bench/thread-cpu.mjs', () => {
  it('names the non-main thread that wrote most the checkpointer, even when the main thread wrote more', () => {
    // Main thread: 50 ticks, writes the WAL (most bytes of all); GC helper: 5 ticks, writes
    // nothing; checkpointer: 3 ticks, 400 KiB into the database file; a thread that ended.
    const before = snapshotFile('before', { 100: [10, 0], 101: [0, 0], 102: [0, 0], 103: [0, 0] });
    const after = snapshotFile('after', { 100: [60, 9_000_000], 101: [5, 0], 102: [3, 409_600] });

    const { status, output } = run(
      'report',
      '--before',
      before,
      '--after',
      after,
      '--requests',
      '100',
    );

    expect(status).toBe(0);
    expect(output).toContain('process 5800, main thread 5000, WAL checkpoint thread 300');
    expect(output).toContain('wrote 4.0 KiB per request');
    expect(output).toContain('other threads (GC, libuv) 500');
  });

  it('reads every thread of a live process, its main thread included', () => {
    const { status, output } = run('snapshot', '--pid', String(process.pid));

    expect(status).toBe(0);
    const snapshot = JSON.parse(output) as {
      pid: string;
      threads: Record<string, { ticks: number; written: number }>;
    };
    expect(snapshot.threads[String(process.pid)]?.ticks).toBeGreaterThan(0);
    for (const thread of Object.values(snapshot.threads)) {
      expect(Number.isInteger(thread.ticks) && Number.isInteger(thread.written)).toBe(true);
    }
  });
});
