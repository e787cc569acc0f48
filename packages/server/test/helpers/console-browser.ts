import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import type { ConfigFile } from '../../src/config/schema.js';
import { BUILT_CONSOLE_DIR } from '../../src/http/console/console-static.js';
import { dialects, type TestDialect } from './dialects.js';
import { startGateway, type TestGateway } from './gateway.js';
import { describeNeeding, requiredExecutable } from './required-services.js';

/**
 * Driving the console in Debian's Chromium (playwright-core): the browser suites' set-up, a fresh
 * browser context per test (`openBrowser`), and `inspectPage` (screenshots at 1280x800 and
 * 390x844 into test/console/screenshots/, git-ignored, unless TOLLGATE_TEST_SCREENSHOTS=0; and
 * axe-core: no serious or critical violation).
 *
 * The structure, chosen for CI time (issue 37, item 6; the three suites took over 5 minutes of a
 * 2-core machine's run):
 *
 * - One Chromium per suite file: `describeConsoleInBrowser` launches it once (`beforeAll`) and
 *   closes it after the file (`afterAll`); `openBrowser` gives each test, and each second person in
 *   a test (an operator, a stranger holding no cookie), a new browser context of its own. A context
 *   has its own cookies, storage and cache, which is the isolation a fresh profile gave, at a
 *   fraction of a launch's cost. No test needs a persistent profile: what must survive a reload
 *   (the chosen language) lives in the context's storage, and nothing is checked across a browser
 *   restart.
 * - One gateway, on one store, per suite file: PostgreSQL when TOLLGATE_TEST_PG_URL is set (the
 *   production store, and CI sets it), else SQLite. These suites test the console's pages; the
 *   stores are covered under every route those pages call by the console API suites, which run on
 *   both (`console-api.test.ts`, `console-operator*.test.ts`, `console-requests.test.ts`,
 *   `console-security.test.ts`, `console-shares.test.ts`, `console-tasks.test.ts`,
 *   `usage/account-usage.test.ts`, `payments/stripe-refund.test.ts`), and no browser assertion is
 *   about a store. Running every page once per store doubled the suites' time for nothing the
 *   pages can show.
 * - Each test still starts from nothing of another's (its own account, user and context), so any
 *   one runs alone with `-t`; screenshots and axe-core stay on every page.
 */
export const CHROMIUM = '/usr/bin/chromium';
export const SCREENSHOTS = fileURLToPath(new URL('../console/screenshots/', import.meta.url));
const AXE_SOURCE = readFileSync(
  createRequire(import.meta.url).resolve('axe-core/axe.min.js'),
  'utf8',
);
/**
 * Whether the browser suites write their screenshots (`TOLLGATE_TEST_SCREENSHOTS`, on unless `0`).
 * They are for a person to look at and assert nothing: what is checked on a page (axe-core, the
 * tour's audits, each suite's expectations) runs either way, at 1280x800. CI turns them off
 * (.ci/run): its clone is thrown away after the run, and taking them cost it about 30 s of 2
 * cores (docs/ci.md, session 23).
 */
export const SCREENSHOTS_TAKEN = process.env['TOLLGATE_TEST_SCREENSHOTS'] !== '0';
export const VIEWPORTS = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
] as const;

/** The store the browser suites run on: PostgreSQL when configured, else SQLite (see above). */
const BROWSER_DIALECT = dialects.find((dialect) => dialect.name === 'postgres') ?? dialects[0];

/** The running suite's Chromium, between its `beforeAll` and `afterAll` (one suite at a time). */
let browser: Browser | undefined;

/** A console gateway of a browser suite, started before its tests: read it in them. */
export interface ServedConsole {
  readonly dialect: TestDialect;
  readonly gateway: TestGateway;
  /** Where the browser goes: the gateway's address without `/v1`. */
  readonly origin: string;
}

/**
 * A browser suite: it needs Chromium (registered skipped without it; CI fails) and the built
 * console (`npm run build`). Before its tests it launches one Chromium and starts one gateway
 * listening on a port (`config`, or the tests' default) on PostgreSQL when configured, else
 * SQLite; both are closed after. `body` declares the tests.
 */
export function describeConsoleInBrowser(
  title: string,
  options: { config?: ConfigFile },
  body: (served: ServedConsole) => void,
): void {
  describeNeeding(requiredExecutable('Chromium', CHROMIUM), title, () => {
    const dialect = BROWSER_DIALECT;
    if (dialect === undefined) throw new Error('no store to run the browser suite on');
    let launched: Browser | undefined;
    let gateway: TestGateway | undefined;
    let origin: string | undefined;
    beforeAll(async () => {
      if (!existsSync(path.join(BUILT_CONSOLE_DIR, 'index.html')))
        throw new Error(`the console is not built in ${BUILT_CONSOLE_DIR}: run npm run build`);
      if (browser !== undefined) throw new Error('another browser suite is running: one at a time');
      mkdirSync(SCREENSHOTS, { recursive: true });
      // Side by side; each kept as soon as it is up, so that `afterAll` closes whatever started.
      const starting = await Promise.allSettled([
        launchChromium().then((started) => {
          launched = started;
          browser = started;
        }),
        startGateway(dialect, options).then(async (started) => {
          gateway = started;
          origin = (await started.listen()).replace(/\/v1$/, '');
        }),
      ]);
      for (const outcome of starting) if (outcome.status === 'rejected') throw outcome.reason;
    });
    afterAll(async () => {
      if (browser === launched) browser = undefined;
      await Promise.all([launched?.close(), gateway?.close()]);
    });
    const running = () => {
      if (gateway === undefined || origin === undefined)
        throw new Error('the console gateway is not started yet');
      return { gateway, origin };
    };
    describe(`on '${dialect.name}'`, () => {
      body({
        dialect,
        get gateway() {
          return running().gateway;
        },
        get origin() {
          return running().origin;
        },
      });
    });
  });
}

function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * A fresh browser context in `language` (its own cookies and storage, as a new profile) with one
 * page, in the suite's Chromium. `cspViolations` collects what the page reports against the
 * Content Security Policy (a suite expects none). `close` closes the context, not the browser.
 */
export async function openBrowser(language: 'zh-CN' | 'en'): Promise<{
  context: BrowserContext;
  page: Page;
  cspViolations: readonly string[];
  close: () => Promise<void>;
}> {
  if (browser === undefined)
    throw new Error('no Chromium: openBrowser is for tests inside describeConsoleInBrowser');
  const context = await browser.newContext({ locale: language, viewport: VIEWPORTS[0] });
  const page = await context.newPage();
  const cspViolations: string[] = [];
  page.on('console', (message) => {
    if (message.text().includes('Content Security Policy')) cspViolations.push(message.text());
  });
  return { context, page, cspViolations, close: () => context.close() };
}

/**
 * Screenshots at both sizes (unless turned off: `SCREENSHOTS_TAKEN`), then axe-core at 1280x800:
 * no serious or critical violation.
 */
export async function inspectPage(page: Page, name: string): Promise<void> {
  if (SCREENSHOTS_TAKEN) {
    for (const viewport of VIEWPORTS) {
      await page.setViewportSize(viewport);
      await page.screenshot({
        path: path.join(SCREENSHOTS, `${name}-${viewport.width}x${viewport.height}.png`),
        fullPage: true,
      });
    }
    await page.setViewportSize(VIEWPORTS[0]);
  }
  // Through the DevTools protocol, which the page's CSP does not govern (nothing inline is added);
  // once per document: the console moves between its pages without reloading, and axe stays.
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    type Violation = {
      id: string;
      impact: string | null;
      help: string;
      nodes: { target: unknown }[];
    };
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: Violation[] }> } })
      .axe;
    const result = await axe.run();
    return result.violations
      .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
      .map(
        (violation) =>
          `${violation.id}: ${violation.help} at ${JSON.stringify(violation.nodes.map((node) => node.target))}`,
      );
  });
  expect(violations, name).toEqual([]);
}
