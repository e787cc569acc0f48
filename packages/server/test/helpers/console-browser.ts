import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import type { ConfigFile } from '../../src/config/schema.js';
import { BUILT_CONSOLE_DIR } from '../../src/console/console-static.js';
import { describeEachDialect, type TestDialect } from './dialects.js';
import { startGateway, type TestGateway } from './gateway.js';
import { describeNeeding, requiredExecutable } from './required-services.js';

/**
 * Driving the console in Debian's Chromium (playwright-core): the browser suites' set-up (the
 * built console, a gateway per store), a fresh profile per browser, and `inspect` (screenshots
 * at 1280x800 and 390x844 into test/console/screenshots/, git-ignored, and axe-core: no serious
 * or critical violation).
 */
export const CHROMIUM = '/usr/bin/chromium';
export const SCREENSHOTS = fileURLToPath(new URL('../console/screenshots/', import.meta.url));
const AXE_SOURCE = readFileSync(
  createRequire(import.meta.url).resolve('axe-core/axe.min.js'),
  'utf8',
);
export const VIEWPORTS = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
] as const;

/** A console gateway of a browser suite, started before its tests: read it in them. */
export interface ServedConsole {
  readonly dialect: TestDialect;
  readonly gateway: TestGateway;
  /** Where the browser goes: the gateway's address without `/v1`. */
  readonly origin: string;
}

/**
 * A browser suite: it needs Chromium (registered skipped without it; CI fails) and the built
 * console (`npm run build`), and runs once per store against a gateway listening on a port
 * (`config`, or the tests' default), closed after. `body` declares the tests.
 */
export function describeConsoleInBrowser(
  title: string,
  options: { config?: ConfigFile },
  body: (served: ServedConsole) => void,
): void {
  describeNeeding(requiredExecutable('Chromium', CHROMIUM), title, () => {
    beforeAll(() => {
      if (!existsSync(path.join(BUILT_CONSOLE_DIR, 'index.html')))
        throw new Error(`the console is not built in ${BUILT_CONSOLE_DIR}: run npm run build`);
      mkdirSync(SCREENSHOTS, { recursive: true });
    });
    describeEachDialect('on $name', (dialect) => {
      let started: { gateway: TestGateway; origin: string } | undefined;
      beforeAll(async () => {
        const gateway = await startGateway(dialect, options);
        started = { gateway, origin: (await gateway.listen()).replace(/\/v1$/, '') };
      });
      afterAll(async () => started?.gateway.close());
      const running = () => {
        if (started === undefined) throw new Error('the console gateway is not started yet');
        return started;
      };
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

/**
 * A headless Chromium in `language` with a fresh profile. `cspViolations` collects what the page
 * reports against the Content Security Policy (a suite expects none).
 */
export async function openBrowser(language: 'zh-CN' | 'en'): Promise<{
  context: BrowserContext;
  page: Page;
  cspViolations: readonly string[];
  close: () => Promise<void>;
}> {
  const profile = mkdtempSync(path.join(tmpdir(), 'tollgate-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    locale: language,
    viewport: VIEWPORTS[0],
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
  const page = context.pages()[0] ?? (await context.newPage());
  const cspViolations: string[] = [];
  page.on('console', (message) => {
    if (message.text().includes('Content Security Policy')) cspViolations.push(message.text());
  });
  return {
    context,
    page,
    cspViolations,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Screenshots at both sizes, then axe-core: no serious or critical violation. */
export async function inspectPage(page: Page, name: string): Promise<void> {
  for (const viewport of VIEWPORTS) {
    await page.setViewportSize(viewport);
    await page.screenshot({
      path: path.join(SCREENSHOTS, `${name}-${viewport.width}x${viewport.height}.png`),
      fullPage: true,
    });
  }
  await page.setViewportSize(VIEWPORTS[0]);
  // Through the DevTools protocol, which the page's CSP does not govern (nothing inline is added).
  await page.evaluate(AXE_SOURCE);
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
