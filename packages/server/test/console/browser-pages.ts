import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { openBrowser, type ServedConsole } from '../helpers/console-browser.js';
import { CONSOLE_PASSWORD } from '../helpers/console-session.js';

/*
 * What the browser suites do on every page they look at, written once (they had a copy each):
 * sign in through an invitation, check the page's geometry at its width, and check that every
 * amount is shown one way. The set-up of a suite (one Chromium, one gateway) is
 * helpers/console-browser.ts `describeConsoleInBrowser`.
 */

export type Language = 'zh-CN' | 'en';

/** Who to invite: a member of an account, or an operator. */
export type Invitee = { role: 'member'; account_id: string } | { role: 'operator' };

/**
 * A console user invited as `invitee` who sets CONSOLE_PASSWORD on the invitation page, in a new
 * browser context in `language`, and is thereby signed in: the page shows the signed-in header
 * when this returns. `watch` is given the page before it opens the invitation (to listen to its
 * errors and requests from the start). Dialogs (a confirmation) are accepted. `close` closes the
 * context.
 */
export async function signedInThroughInvitation(
  served: ServedConsole,
  options: {
    language: Language;
    invitee: Invitee;
    /** Starts the user's email (`<label>-<role>-<uuid>@example.test`), to tell suites apart. */
    label: string;
    watch?: (page: Page) => void;
  },
) {
  const { language, invitee, label, watch } = options;
  const invitation = await served.gateway.services.consoleUsers.invite({
    email: `${label}-${invitee.role}-${randomUUID()}@example.test`,
    ...invitee,
  });
  const browser = await openBrowser(language);
  const { page } = browser;
  watch?.(page);
  page.on('dialog', (dialog) => void dialog.accept());
  await page.goto(`${served.origin}${invitation.invite_url}`);
  await page.locator('input[name="new-password"]').fill(CONSOLE_PASSWORD);
  await page.locator('input[name="confirm-password"]').fill(CONSOLE_PASSWORD);
  await page.locator('form button[type="submit"]').click();
  await page.locator('header .who').waitFor();
  return browser;
}

/**
 * What sticks out at the page's width (the suites look at 1280 px, docs/console.md "Layout"):
 * the page scrolling sideways; a visible control (button, link, field, chart, disclosure) ending
 * outside the viewport or outside its card; a card wider than itself; a table scrolling inside
 * its box (`.table-wrap`); a cell or control of a table ending past that box. Run in the page, as
 * text (the server's type check has no DOM).
 */
const GEOMETRY_SCRIPT = `(() => {
  const problems = [];
  const text = (element) => (element.textContent || element.getAttribute('name') || '').trim().replace(/\\s+/g, ' ').slice(0, 40);
  const html = document.documentElement;
  const width = html.clientWidth;
  if (html.scrollWidth > width) problems.push('the page scrolls sideways: ' + html.scrollWidth + ' > ' + width);
  const controls = 'button, a, input, select, textarea, canvas, summary';
  for (const control of document.querySelectorAll(controls)) {
    const box = control.getBoundingClientRect();
    if (box.width <= 1 || box.height <= 1) continue; // not shown, or visually hidden
    const name = control.tagName + ' "' + text(control) + '"';
    if (box.left < -1 || box.right > width + 1)
      problems.push(name + ' is outside the viewport: ' + Math.round(box.left) + '–' + Math.round(box.right));
    const card = control.closest('.card');
    if (card !== null) {
      const edge = card.getBoundingClientRect();
      if (box.right > edge.right + 1 || box.left < edge.left - 1)
        problems.push(name + ' ends outside its card (' + text(card) + ')');
    }
  }
  for (const card of document.querySelectorAll('.card'))
    if (card.scrollWidth > card.clientWidth + 1)
      problems.push('a card is wider than itself (' + text(card) + '): ' + card.scrollWidth + ' > ' + card.clientWidth);
  for (const wrap of document.querySelectorAll('.table-wrap')) {
    const first = wrap.querySelector('th');
    const name = first === null ? '?' : text(first);
    if (wrap.scrollWidth > wrap.clientWidth + 1)
      problems.push('the table of "' + name + '" scrolls: ' + wrap.scrollWidth + ' > ' + wrap.clientWidth);
    const box = wrap.getBoundingClientRect();
    for (const part of wrap.querySelectorAll('th, td, ' + controls)) {
      const edge = part.getBoundingClientRect();
      if (edge.width > 1 && edge.right > box.right + 1)
        problems.push(part.tagName + ' "' + text(part) + '" of the table of "' + name + '" ends at ' + Math.round(edge.right) + ', past ' + Math.round(box.right));
    }
  }
  return problems;
})()`;

/** What sticks out of the page at its current width (`GEOMETRY_SCRIPT`); empty: nothing. */
export function geometryProblems(page: Page): Promise<string[]> {
  return page.evaluate<string[]>(GEOMETRY_SCRIPT);
}

/** The word after an amount's exact figure on hover (`1,234 微元`). */
const MICRO_YUAN: Readonly<Record<Language, string>> = { 'zh-CN': '微元', en: 'micro-yuan' };

/**
 * `micro` as the console must show it: yuan with two decimals cut toward zero, the whole yuan
 * grouped by three; not zero but under one fen: `<¥0.01` (packages/console/README.md, "Money").
 */
export function shownAs(micro: bigint): string {
  const sign = micro < 0n ? '-' : '';
  const size = micro < 0n ? -micro : micro;
  if (size > 0n && size < 10_000n) return `${sign}<¥0.01`;
  const whole = (size / 1_000_000n).toLocaleString('en-US');
  const fen = String((size % 1_000_000n) / 10_000n).padStart(2, '0');
  return `${sign}¥${whole}.${fen}`;
}

/**
 * Every amount shown (`.amount`) that is not shown one way: its text yuan with two decimals (or
 * `<¥0.01`), its hover the exact micro-yuan in the page's language, and the text exactly what
 * that figure makes (`shownAs`). Also how many amounts the page shows.
 */
export async function amountProblems(
  page: Page,
  language: Language,
): Promise<{ count: number; problems: string[] }> {
  const amounts = await page.locator('.amount').evaluateAll((spans) =>
    spans.map((span) => ({
      text: (span as unknown as { textContent: string }).textContent,
      title: (span as unknown as { title: string }).title,
    })),
  );
  const hover = new RegExp(`^(-?[\\d,]+) ${MICRO_YUAN[language]}$`);
  const problems = amounts.flatMap(({ text, title }) => {
    const exact = hover.exec(title)?.[1];
    const fine =
      /^-?(<¥0\.01|¥\d{1,3}(,\d{3})*\.\d{2})$/.test(text) &&
      exact !== undefined &&
      text === shownAs(BigInt(exact.replaceAll(',', '')));
    return fine ? [] : [`the amount "${text}" (hover "${title}")`];
  });
  return { count: amounts.length, problems };
}

/** Every amount on the page shown one way (`amountProblems`); answers how many there are. */
export async function expectAmountsShownOneWay(page: Page, language: Language): Promise<number> {
  const { count, problems } = await amountProblems(page, language);
  expect(problems).toEqual([]);
  return count;
}
