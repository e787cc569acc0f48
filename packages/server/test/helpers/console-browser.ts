import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';

/**
 * Driving the console in Debian's Chromium (playwright-core): a fresh profile per browser, and
 * `inspect` (screenshots at 1280x800 and 390x844 into test/console/screenshots/, git-ignored,
 * and axe-core: no serious or critical violation). Same flags and checks as
 * console-browser.test.ts, which predates this helper.
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

export async function openBrowser(
  language: 'zh-CN' | 'en',
): Promise<{ context: BrowserContext; page: Page; close: () => Promise<void> }> {
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
  return {
    context,
    page,
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
