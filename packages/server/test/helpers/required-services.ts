import { existsSync } from 'node:fs';
import { describe } from 'vitest';
import { SKIP_NOTE_KEY, skipBanner, type SkipNote } from './skip-note.js';

/**
 * The services some suites need beyond SQLite and memory: PostgreSQL (every store and money test
 * runs on it too), Redis (shared rate limits) and Chromium (the console's browser suite). This module decides, from the environment, for
 * every test file, whether those suites run; it is the one place a skip reason comes from.
 *
 * Without a service its suites are still registered, as skipped suites stamped with the reason,
 * so vitest counts their tests as skipped and the closing summary
 * (test/reporters/skip-summary.ts) says how many and why. A missing service is announced loudly,
 * once per run, by that reporter (every test file loads this module in its own worker: a banner
 * printed here came once per file); under CI (`CI=true`) it fails the run instead (docs/ci.md).
 */
export interface RequiredService {
  readonly name: SkipNote['service'];
  /** The service's URL (for a program, its executable); `undefined` when its suites are skipped. */
  readonly url: string | undefined;
  /** Why its suites are skipped (`TOLLGATE_TEST_PG_URL is not set`); `undefined` when they run. */
  readonly skipReason: string | undefined;
}

/** Reads one service's variable; throws under CI when it is missing, else skips its suites. */
export function requiredService(
  name: RequiredService['name'],
  variable: 'TOLLGATE_TEST_PG_URL' | 'TOLLGATE_TEST_REDIS_URL',
): RequiredService {
  const url = process.env[variable];
  if (url !== undefined && url !== '') return { name, url, skipReason: undefined };
  return missing(name, `${variable} is not set`);
}

/**
 * A service whose suites a run leaves out on purpose (`TOLLGATE_TEST_DIALECTS=sqlite`: the
 * second Node version's pass, docs/ci.md): registered skipped with `reason`, counted and printed,
 * and no failure under CI, since nothing is missing.
 */
export function leftOutOnPurpose(name: RequiredService['name'], reason: string): RequiredService {
  return { name, url: undefined, skipReason: reason };
}

/** A program some suites drive (Chromium): there when its executable exists. */
export function requiredExecutable(
  name: RequiredService['name'],
  executable: string,
): RequiredService {
  if (existsSync(executable)) return { name, url: executable, skipReason: undefined };
  return missing(name, `${executable} does not exist`);
}

/** Under CI a missing service fails the run; otherwise its suites are registered skipped. */
function missing(name: RequiredService['name'], skipReason: string): RequiredService {
  if (process.env['CI'] === 'true')
    throw new Error(`\n${skipBanner(name, skipReason)}\nCI requires ${name}.`);
  return { name, url: undefined, skipReason };
}

/** How many suites registered skipped by `describeNeeding` are being collected right now. */
let insideSkippedSuite = 0;

/**
 * Registers a suite that needs `service`: run when it is there, otherwise registered skipped
 * (its tests counted as skipped) with the reason in its meta. The body still runs at collection
 * either way, as vitest's does: it only declares tests and hooks.
 */
export function describeNeeding(service: RequiredService, title: string, body: () => void): void {
  // Inside a suite already registered skipped, a plain suite: it is skipped with its parent, and
  // vitest marks its tests skipped (a skipped suite nested in a skipped one leaves its tests
  // unmarked, out of vitest's own count, so two summaries gave two skip counts). The outer
  // suite's note says why (the reporter reads the outermost one).
  if (service.skipReason === undefined || insideSkippedSuite > 0) {
    describe(title, body);
    return;
  }
  const collector = describe.skip(title, () => {
    insideSkippedSuite += 1;
    try {
      body();
    } finally {
      insideSkippedSuite -= 1;
    }
  });
  const note: SkipNote = { service: service.name, reason: service.skipReason };
  if (collector.suite !== undefined)
    (collector.suite.meta as Record<string, unknown>)[SKIP_NOTE_KEY] = note;
}

/**
 * A title as `describe.each` would format it for one item: `$name` becomes the quoted name,
 * `%s` the bare one (so test names stay as they were).
 */
export function titleFor(title: string, name: string): string {
  return title.replaceAll('$name', `'${name}'`).replaceAll('%s', name);
}
