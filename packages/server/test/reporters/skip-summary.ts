import type {
  Reporter,
  SerializedError,
  TestCase,
  TestModule,
  TestSuite,
  Vitest,
} from 'vitest/node';
import path from 'node:path';
import { skipBanner, skipNoteOf, type SkipNote } from '../helpers/skip-note.js';

/**
 * The run's last two lines (docs/ci.md, "The closing lines"): why tests were skipped, then the
 * tally, in the form CI reads —
 *
 *     skipped: 212 (200 PostgreSQL: TOLLGATE_TEST_PG_URL is not set; 12 Redis: TOLLGATE_TEST_REDIS_URL is not set)
 *     tests: 713 passed, 0 failed, 212 skipped
 *
 * Registered after vitest's default reporter (vitest.config.ts), whose own summary says only
 * "713 passed" when a third of the suite never ran. The counts are vitest's: a suite that needs
 * a missing service is registered skipped (helpers/required-services.ts) and stamped with the
 * reason that decided it, which this reporter reads back from the suite's meta.
 *
 * `failed` counts failed tests plus every failure outside a test (a file that did not load, a
 * failing `beforeAll`/`afterAll`, an unhandled error), so it is never 0 for a run that failed.
 */
export default class SkipSummaryReporter implements Reporter {
  private vitest: Vitest | undefined;
  /** The services already announced as the run goes (one early line each). */
  private readonly announced = new Set<SkipNote['service']>();

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
  }

  /**
   * As soon as the first file that skips a service's suites is collected, one line says so: a
   * newcomer whose run is long, or stopped before its end, learns at the start that those suites
   * are not running (the closing banner alone came only at the very end). The closing lines
   * still give the banner and the counts.
   */
  onTestModuleCollected(module: TestModule): void {
    for (const suite of module.children.allSuites()) {
      const note = skipNoteOf(suite.meta());
      if (note === undefined || this.announced.has(note.service)) continue;
      this.announced.add(note.service);
      this.log(earlySkipLine(note));
    }
  }

  private log(line: string): void {
    if (this.vitest === undefined) console.log(line);
    else this.vitest.logger.log(line);
  }

  async onTestRunEnd(
    testModules: ReadonlyArray<TestModule>,
    unhandledErrors: ReadonlyArray<SerializedError>,
  ): Promise<void> {
    const tally = summarize(testModules, unhandledErrors.length, this.vitest?.config.root);
    // vitest dispatches onTestRunEnd and then, in the same tick, the default reporter's
    // onFinished, which prints its summary synchronously: one macrotask later, ours comes last.
    await new Promise((resolve) => setImmediate(resolve));
    const lines = [
      ...bannerLines(tally),
      skippedLine(tally),
      ...failedOutsideLines(tally),
      tallyLine(tally),
    ];
    this.log('');
    for (const line of lines) this.log(line);
  }
}

export interface Tally {
  passed: number;
  /** Failed tests. */
  failedTests: number;
  /** Failures outside a test: files that did not load, failing hooks, unhandled errors. */
  failedOutside: string[];
  skipped: number;
  /** Skipped tests by reason (`service: why`, or what kind of skip); printed most first. */
  skippedBy: Map<string, number>;
  /** The services whose suites were skipped, with why: one banner each. */
  servicesSkipped: Map<SkipNote['service'], string>;
}

/** Counts every test of the run, and every failure that belongs to no test. */
export function summarize(
  modules: ReadonlyArray<TestModule>,
  unhandledErrors: number,
  root = process.cwd(),
): Tally {
  const tally: Tally = {
    passed: 0,
    failedTests: 0,
    failedOutside: [],
    skipped: 0,
    skippedBy: new Map(),
    servicesSkipped: new Map(),
  };
  for (const module of modules) {
    const file = path.relative(root, module.moduleId);
    if (module.errors().length > 0)
      tally.failedOutside.push(`${file}: did not load, or a file-level hook failed`);
    for (const suite of module.children.allSuites())
      if (suite.errors().length > 0)
        tally.failedOutside.push(`${file} > ${suite.fullName}: a hook failed`);
    for (const test of module.children.allTests()) {
      const state = test.result().state;
      if (state === 'passed') tally.passed += 1;
      else if (state === 'failed') tally.failedTests += 1;
      else {
        tally.skipped += 1;
        // A test of a skipped suite nested in another skipped suite keeps no result (vitest
        // does not mark it; its own summary leaves it out): it is a skip all the same.
        const note = state === 'pending' && !insideSkippedSuite(test) ? undefined : skipNote(test);
        if (note !== undefined) tally.servicesSkipped.set(note.service, note.reason);
        const reason =
          state === 'pending' && !insideSkippedSuite(test)
            ? 'not run: the run ended first'
            : skipReason(test);
        tally.skippedBy.set(reason, (tally.skippedBy.get(reason) ?? 0) + 1);
      }
    }
  }
  for (let index = 0; index < unhandledErrors; index += 1)
    tally.failedOutside.push('an unhandled error (printed above)');
  return tally;
}

function insideSkippedSuite(test: TestCase): boolean {
  for (let parent = test.parent; parent.type === 'suite'; parent = parent.parent)
    if (parent.options.mode === 'skip' || parent.options.mode === 'todo') return true;
  return false;
}

/**
 * The note of the outermost suite registered skipped for a service (a Redis variant inside a
 * skipped PostgreSQL suite counts under PostgreSQL: that is what removed the whole block), else
 * what kind of skip it was.
 */
function skipReason(test: TestCase): string {
  const outermost = skipNote(test);
  if (outermost !== undefined) return `${outermost.service}: ${outermost.reason}`;
  let afterFailure = false;
  for (let parent: TestSuite | TestModule = test.parent; ; parent = parent.parent) {
    if (parent.errors().length > 0) afterFailure = true;
    if (parent.type === 'module') break;
  }
  return afterFailure
    ? 'not run: a hook of their suite failed'
    : 'skip, skipIf or todo in a test file';
}

/** The note of the outermost suite registered skipped for a service, if any. */
function skipNote(test: TestCase): SkipNote | undefined {
  let outermost: SkipNote | undefined;
  for (let parent: TestSuite | TestModule = test.parent; ; parent = parent.parent) {
    outermost = skipNoteOf(parent.meta()) ?? outermost;
    if (parent.type === 'module') return outermost;
  }
}

/** Said while the run goes, the first time a file skips `note.service`'s suites. */
export function earlySkipLine(note: SkipNote): string {
  return `*** ${note.service} suites are being skipped in this run: ${note.reason} (counted at the end) ***`;
}

/** One loud line per service whose suites were skipped, however many files had them. */
function bannerLines(tally: Tally): string[] {
  return [...tally.servicesSkipped].map(([service, reason]) => skipBanner(service, reason));
}

export function skippedLine(tally: Tally): string {
  if (tally.skipped === 0) return 'skipped: none';
  const reasons = [...tally.skippedBy]
    .sort(([, first], [, second]) => second - first)
    .map(([reason, count]) => `${count} ${reason}`);
  return `skipped: ${tally.skipped} (${reasons.join('; ')})`;
}

function failedOutsideLines(tally: Tally): string[] {
  if (tally.failedOutside.length === 0) return [];
  return [
    `failed outside a test: ${tally.failedOutside.length} (${tally.failedOutside.join('; ')})`,
  ];
}

/** Exactly `tests: N passed, N failed, N skipped` (CI reads this form). */
export function tallyLine(tally: Tally): string {
  const failed = tally.failedTests + tally.failedOutside.length;
  return `tests: ${tally.passed} passed, ${failed} failed, ${tally.skipped} skipped`;
}
