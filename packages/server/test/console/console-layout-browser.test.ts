import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { describeConsoleInBrowser, inspectPage } from '../helpers/console-browser.js';
import { finishedRequest, unknownOutcome } from '../helpers/records.js';
import { signedInThroughInvitation, type Invitee, type Language } from './browser-pages.js';

/**
 * The console's status pages, favicon and resolve form in Chromium (issue 36, items 4 and 7): an
 * unknown console address shows 404 and an operator page opened by a member 403, each linking
 * back to the overview; the favicon is served from /console/assets/ under the page's CSP; an
 * operator finds a statement's account with the account picker; the resolve page's radio
 * buttons sit on their labels' lines, aligned, in both languages, and its capture amount is typed
 * in yuan, echoed in micro-yuan before it is sent, refused on the page past its bounds, and
 * captured exactly. Screenshots and axe-core on those pages (helpers/console-browser.ts).
 *
 * Tables inside their cards at 1280 px and amounts shown one way, on every page in both
 * languages, are the tour's (console-tour-browser.test.ts, with the widest rows this suite used
 * to walk the member's keys, models, tasks and requests pages for).
 */

/** The English words the tests look for (the resolve form is checked in Chinese, inline). */
const TEXT = {
  overview: 'Overview',
  back: 'Back to the overview',
  notFound: 'Page not found',
  forbidden: 'Not allowed',
  accounts: 'Accounts',
} as const;

describeConsoleInBrowser('console layout in Chromium', {}, (served) => {
  const { dialect } = served;
  const inspect = (page: Page, name: string) => inspectPage(page, `${dialect.name}-layout-${name}`);

  /** A console user invited and signed in through the invitation page, in `language`. */
  const signedIn = (language: Language, invitee: Invitee) =>
    signedInThroughInvitation(served, { language, invitee, label: 'layout' });

  it(
    'a member: the favicon, the 404 and 403 pages with their way back',
    { timeout: 180_000 },
    async () => {
      const account = await served.gateway.account(3_000_000);
      const { page, cspViolations, close } = await signedIn('en', {
        role: 'member',
        account_id: account.accountId,
      });
      try {
        const text = TEXT;
        await page.getByRole('heading', { name: text.overview }).waitFor();

        // The favicon: a hashed SVG under /console/assets/, served with its type.
        const icon = (await page.locator('link[rel="icon"]').getAttribute('href')) ?? '';
        expect(icon).toMatch(/^\/console\/assets\/favicon-[\w-]+\.svg$/);
        const served_icon = await fetch(`${served.origin}${icon}`);
        expect(served_icon.status).toBe(200);
        expect(served_icon.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
        expect(await served_icon.text()).toContain('<svg');

        // An unknown address: 404, with a link back to the overview.
        await page.goto(`${served.origin}/console/no-such-page`);
        await page.getByText('404', { exact: true }).waitFor();
        expect(await page.getByText('404', { exact: true }).isVisible()).toBe(true);
        await page.getByRole('heading', { name: `404 ${text.notFound}` }).waitFor();
        await inspect(page, 'en-404');
        await page.getByRole('link', { name: text.back }).click();
        await page.getByRole('heading', { name: text.overview }).waitFor();
        expect(new URL(page.url()).pathname).toBe('/console/');
        // One level too deep is unknown too.
        await page.goto(`${served.origin}/console/keys/extra`);
        await page.getByRole('heading', { name: `404 ${text.notFound}` }).waitFor();

        // An operator page opened by a member: 403, not the overview.
        await page.goto(`${served.origin}/console/admin/accounts`);
        await page.getByRole('heading', { name: `403 ${text.forbidden}` }).waitFor();
        expect(await page.getByText('403', { exact: true }).isVisible()).toBe(true);
        await inspect(page, 'en-403');
        await page.getByRole('link', { name: text.back }).click();
        await page.getByRole('heading', { name: text.overview }).waitFor();
        expect(cspViolations).toEqual([]);
      } finally {
        await close();
      }
    },
  );

  it(
    'an operator: 404 for an unknown address, the statement account picked, the resolve page aligned and in yuan',
    { timeout: 180_000 },
    async () => {
      const { accountId, key } = await served.gateway.account(1_000_000);
      // A long reference: the statement's last column.
      await served.gateway.admin('POST', `/admin/v1/accounts/${accountId}/topups`, {
        amount: 1_234_567,
        reference: `bank-transfer-${randomUUID()}`,
      });
      const requestId = await finishedRequest(served.gateway.services, {
        key,
        hold: 5_000,
        outcome: unknownOutcome,
      });
      const { page, cspViolations, close } = await signedIn('en', { role: 'operator' });
      try {
        const text = TEXT;
        await page.getByRole('heading', { name: text.accounts, exact: true }).waitFor();

        // Unknown to an operator: an address under /admin that names no page, and a member's page.
        for (const address of ['/console/admin/no-such-page', '/console/keys']) {
          await page.goto(`${served.origin}${address}`);
          await page.getByRole('heading', { name: `404 ${text.notFound}` }).waitFor();
          expect(await page.getByText('404', { exact: true }).isVisible()).toBe(true);
        }
        await inspect(page, 'en-operator-404');
        await page.getByRole('link', { name: text.back }).click();
        await page.getByRole('heading', { name: text.accounts, exact: true }).waitFor();

        // Statements: the account found with the picker, its movements shown.
        const operations = page.getByRole('navigation', { name: 'Operations' });
        await operations.getByRole('link', { name: 'Statements' }).click();
        // The account picker: found by its email, then chosen (never pasted).
        const { email: accountEmail } = await served.gateway.admin(
          'GET',
          `/admin/v1/accounts/${accountId}`,
        );
        await page.locator('input[name="statement-account-search"]').fill(String(accountEmail));
        await page
          .locator(`select[name="statement-account"] option[value="${accountId}"]`)
          .waitFor({ state: 'attached' });
        await page.locator('select[name="statement-account"]').selectOption(accountId);
        await page.getByRole('button', { name: 'Show' }).click();
        await page.locator('tr[data-movement-kind="topup"]').nth(1).waitFor();
        await inspect(page, 'en-statements');

        // Resolve: in both languages each radio sits on its label's line, the radios aligned.
        await operations.getByRole('link', { name: 'To resolve' }).click();
        const form = page.locator(`form[data-record-id="${requestId}"]`);
        await form.waitFor();
        for (const language of ['en', 'zh-CN'] as const) {
          if (language === 'zh-CN')
            await page.getByRole('combobox', { name: 'Language' }).selectOption('zh-CN');
          await form.locator('fieldset').waitFor();
          const choices = await form.locator('label.choice').evaluateAll((labels) =>
            labels.map((label) => {
              type Box = { left: number; top: number; bottom: number; height: number };
              const element = label as unknown as {
                getBoundingClientRect(): Box;
                querySelector(selector: string): { getBoundingClientRect(): Box } | null;
              };
              const radio = element.querySelector('input[type="radio"]')?.getBoundingClientRect();
              return { label: element.getBoundingClientRect(), radio };
            }),
          );
          expect(choices).toHaveLength(2);
          const lefts = new Set(choices.map((choice) => Math.round(choice.radio?.left ?? -1)));
          expect(lefts.size, `radios aligned in ${language}`).toBe(1);
          for (const { label, radio } of choices) {
            expect(radio).toBeDefined();
            if (radio === undefined) continue;
            // One line: the label no taller than two radios, the radio within it, centred.
            expect(label.height).toBeLessThan(radio.height * 2.5);
            const middle = (radio.top + radio.bottom) / 2;
            expect(Math.abs(middle - (label.top + label.bottom) / 2)).toBeLessThan(3);
            // The radio at its own size, not stretched across the line.
            expect(radio.height).toBeLessThan(24);
          }
          await inspect(page, `${language}-resolve`);
        }

        // Capture in yuan: too many decimals or too much is refused on the page and sent nowhere;
        // 0.003 yuan is echoed as 3,000 micro-yuan and captured exactly.
        await form.getByLabel('扣款（上游已执行）').check();
        const amount = form.locator('input[name="resolve-amount"]');
        const echo = form.locator('.micro-echo');
        await form.locator('input[name="resolve-reason"]').fill('upstream log shows it ran');
        await amount.fill('0.0000001');
        await expect.poll(() => echo.textContent()).toContain('最多 6 位小数');
        await form.getByRole('button', { name: '提交' }).click();
        await amount.fill('10000000.000001');
        await expect.poll(() => echo.textContent()).toContain('10,000,000.00');
        await form.getByRole('button', { name: '提交' }).click();
        expect(await served.gateway.balance(accountId)).toMatchObject({ held: 5_000 });
        await amount.fill('0.003');
        await expect.poll(() => echo.textContent()).toBe('= 3,000 微元');
        await form.getByRole('button', { name: '提交' }).click();
        await form.waitFor({ state: 'detached' });
        expect(await served.gateway.balance(accountId)).toMatchObject({
          balance: 1_000_000 + 1_234_567 - 3_000,
          held: 0,
        });
        expect(cspViolations).toEqual([]);
      } finally {
        await close();
      }
      await served.gateway.expectLedgerClean();
    },
  );
});
