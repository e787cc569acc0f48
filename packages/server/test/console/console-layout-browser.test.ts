import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { describeConsoleInBrowser, inspectPage, openBrowser } from '../helpers/console-browser.js';
import { CONSOLE_PASSWORD } from '../helpers/console-session.js';
import { finishedRequest, unknownOutcome } from '../helpers/records.js';

/**
 * The console's layout, navigation and money in Chromium (issue 36, items 4 and 7): an unknown
 * console address shows 404 and an operator page opened by a member 403, each linking back to
 * the overview; at 1280 px no table is wider than its box or its card, and no control of a row
 * ends past it, in English (the longer texts) and in Chinese; every amount is yuan with two
 * decimals (`<¥0.01` under one fen) with the exact micro-yuan on hover; the resolve page's radio
 * buttons sit on their labels' lines, aligned, and its capture amount is typed in yuan, echoed
 * in micro-yuan before it is sent; the favicon is served from /console/assets/ under the page's
 * CSP. Screenshots and axe-core on the new pages (helpers/console-browser.ts).
 */

const TEXT = {
  'zh-CN': {
    overview: '账户概览',
    keys: 'API 密钥',
    models: '模型与价格',
    tasks: '任务',
    requests: '请求记录',
    back: '返回概览',
    notFound: '页面不存在',
    forbidden: '无权访问',
    microYuan: '微元',
    setPassword: '设置密码并登录',
    accounts: '账户',
  },
  en: {
    overview: 'Overview',
    keys: 'API keys',
    models: 'Models',
    tasks: 'Tasks',
    requests: 'Requests',
    back: 'Back to the overview',
    notFound: 'Page not found',
    forbidden: 'Not allowed',
    microYuan: 'micro-yuan',
    setPassword: 'Set password and sign in',
    accounts: 'Accounts',
  },
} as const;

type Language = keyof typeof TEXT;

/**
 * What sticks out at the page's current width: the page scrolling sideways, a card wider than
 * itself, a table scrolling inside its box (`.table-wrap`), or a cell or control ending past
 * that box. Run in the page (the server's type check has no DOM: a script as text).
 */
const OVERFLOW_SCRIPT = `(() => {
  const problems = [];
  const text = (element) => (element.textContent || '').trim().replace(/\\s+/g, ' ').slice(0, 40);
  const html = document.documentElement;
  if (html.scrollWidth > html.clientWidth)
    problems.push('the page scrolls sideways: ' + html.scrollWidth + ' > ' + html.clientWidth);
  for (const card of document.querySelectorAll('.card'))
    if (card.scrollWidth > card.clientWidth + 1)
      problems.push('a card is wider than itself (' + text(card) + '): ' + card.scrollWidth + ' > ' + card.clientWidth);
  for (const wrap of document.querySelectorAll('.table-wrap')) {
    const first = wrap.querySelector('th');
    const name = first === null ? '?' : text(first);
    if (wrap.scrollWidth > wrap.clientWidth + 1)
      problems.push('the table of "' + name + '" scrolls: ' + wrap.scrollWidth + ' > ' + wrap.clientWidth);
    const box = wrap.getBoundingClientRect();
    for (const part of wrap.querySelectorAll('th, td, button, a, input, select')) {
      const edge = part.getBoundingClientRect().right;
      if (edge > box.right + 1)
        problems.push(part.tagName + ' "' + text(part) + '" of the table of "' + name + '" ends at ' + Math.round(edge) + ', past ' + Math.round(box.right));
    }
  }
  return problems;
})()`;

async function overflowOf(page: Page): Promise<string[]> {
  return page.evaluate<string[]>(OVERFLOW_SCRIPT);
}

/** Every amount shown: its text and its hover text. */
async function amountsOf(page: Page): Promise<{ text: string; title: string }[]> {
  return page.locator('.amount').evaluateAll((spans) =>
    spans.map((span) => ({
      text: (span as unknown as { textContent: string }).textContent,
      title: (span as unknown as { title: string }).title,
    })),
  );
}

/**
 * `micro` as the console must show it: yuan with two decimals cut toward zero, the whole yuan
 * grouped by three; not zero but under one fen: `<¥0.01` (packages/console/README.md, "Money").
 */
function shownAs(micro: bigint): string {
  const sign = micro < 0n ? '-' : '';
  const size = micro < 0n ? -micro : micro;
  if (size > 0n && size < 10_000n) return `${sign}<¥0.01`;
  const whole = (size / 1_000_000n).toLocaleString('en-US');
  const fen = String((size % 1_000_000n) / 10_000n).padStart(2, '0');
  return `${sign}¥${whole}.${fen}`;
}

/** Each amount: two decimals at most, its exact figure on hover, and the text that figure makes. */
async function expectAmountsShownOneWay(page: Page, language: Language): Promise<number> {
  const amounts = await amountsOf(page);
  const unit = TEXT[language].microYuan;
  for (const { text, title } of amounts) {
    expect(text).toMatch(/^-?(<¥0\.01|¥\d{1,3}(,\d{3})*\.\d{2})$/);
    const exact = new RegExp(`^(-?[\\d,]+) ${unit}$`).exec(title);
    expect(exact, `the hover text of ${text}: ${title}`).not.toBeNull();
    expect(text).toBe(shownAs(BigInt((exact?.[1] ?? '').replaceAll(',', ''))));
  }
  return amounts.length;
}

describeConsoleInBrowser('console layout in Chromium', {}, (served) => {
  const { dialect } = served;
  const inspect = (page: Page, name: string) => inspectPage(page, `${dialect.name}-layout-${name}`);

  /** A console user invited and signed in through the invitation page, in `language`. */
  const signedIn = async (
    language: Language,
    invite: { role: 'member'; account_id: string } | { role: 'operator' },
  ) => {
    const invitation = await served.gateway.services.consoleUsers.invite({
      email: `layout-${invite.role}-${randomUUID()}@example.test`,
      ...invite,
    });
    const browser = await openBrowser(language);
    browser.page.on('dialog', (dialog) => void dialog.accept());
    await browser.page.goto(`${served.origin}${invitation.invite_url}`);
    await browser.page.locator('input[name="new-password"]').fill(CONSOLE_PASSWORD);
    await browser.page.locator('input[name="confirm-password"]').fill(CONSOLE_PASSWORD);
    await browser.page.getByRole('button', { name: TEXT[language].setPassword }).click();
    return browser;
  };

  it(
    'a member: 404 and 403 pages, tables inside their cards at 1280 px, amounts in two decimals',
    { timeout: 180_000 },
    async () => {
      // An account with the widest rows its pages show: a key limited to two models with an
      // expiry, a chat request charged less than one fen, and an image task still queued.
      const account = await served.gateway.account(3_000_000);
      await served.gateway.newKey(account.accountId, {
        name: 'a key for the nightly batch of reports',
        models: ['sim-chat', 'sim-image'],
        expires_at: new Date(Date.now() + 30 * 86_400_000).toISOString(),
      });
      const chat = await fetch(`${served.origin}/v1/chat/completions`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${account.key}`,
          'content-type': 'application/json',
          'idempotency-key': randomUUID(),
        },
        body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(chat.status).toBe(200);
      const image = await fetch(`${served.origin}/v1/images/generations`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${account.key}`,
          'content-type': 'application/json',
          'idempotency-key': randomUUID(),
        },
        body: JSON.stringify({ model: 'sim-image', prompt: 'a lighthouse', size: '256x256' }),
      });
      expect(image.status).toBe(202);

      const { page, cspViolations, close } = await signedIn('en', {
        role: 'member',
        account_id: account.accountId,
      });
      try {
        const text = TEXT.en;
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

        // Overview: every figure in two decimals, the exact micro-yuan on hover.
        await page.locator('[data-figure="balance"] .amount').waitFor();
        await page.locator('[data-figure="spend-today"] .amount').waitFor();
        expect(await expectAmountsShownOneWay(page, 'en')).toBeGreaterThan(3);

        for (const language of ['en', 'zh-CN'] as const) {
          if (language === 'zh-CN')
            await page.getByRole('combobox', { name: 'Language' }).selectOption('zh-CN');
          const words = TEXT[language];
          // Keys: two keys, one limited, each with its Rotate and Disable buttons in the card.
          await page.getByRole('navigation').getByRole('link', { name: words.keys }).click();
          await expect.poll(() => page.locator('tr[data-key-id]').count()).toBe(2);
          await expect
            .poll(() => page.locator('[data-key-spend] .amount').first().getAttribute('title'))
            .toMatch(new RegExp(`^[\\d,]+ ${words.microYuan}$`));
          expect(await overflowOf(page)).toEqual([]);
          await expectAmountsShownOneWay(page, language);
          await inspect(page, `${language}-keys-1280`);

          // Models: every price table inside its card, each price in two decimals.
          await page.getByRole('navigation').getByRole('link', { name: words.models }).click();
          await page.locator('[data-model-id="sim-h3"] tr[data-price]').first().waitFor();
          expect(await overflowOf(page)).toEqual([]);
          expect(await expectAmountsShownOneWay(page, language)).toBeGreaterThan(10);

          // Tasks: the queued image task, its amount and its key in the last column.
          await page.getByRole('navigation').getByRole('link', { name: words.tasks }).click();
          await page.locator('tr[data-task-id]').first().waitFor();
          expect(await overflowOf(page)).toEqual([]);
          await expectAmountsShownOneWay(page, language);

          // Requests: the chat's charge, under one fen, is "<¥0.01" (its figure on hover).
          await page.getByRole('navigation').getByRole('link', { name: words.requests }).click();
          const chatRow = page.locator('tr[data-request-id]', { hasText: 'sim-chat' });
          await chatRow.waitFor();
          const charge = chatRow.locator('.amount');
          const exact = Number(
            ((await charge.getAttribute('title')) ?? '').split(' ')[0]?.replaceAll(',', ''),
          );
          expect(exact).toBeGreaterThan(0);
          expect(await charge.textContent()).toBe(
            exact < 10_000 ? '<¥0.01' : shownAs(BigInt(exact)),
          );
          expect(await overflowOf(page)).toEqual([]);
          await expectAmountsShownOneWay(page, language);
        }
        expect(cspViolations).toEqual([]);
      } finally {
        await close();
      }
    },
  );

  it(
    'an operator: 404 for an unknown address, the statement table inside its card, the resolve page aligned and in yuan',
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
        const text = TEXT.en;
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

        // Statements: the movements' table, description and reference last, inside its card.
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
        expect(await overflowOf(page)).toEqual([]);
        expect(await expectAmountsShownOneWay(page, 'en')).toBeGreaterThan(4);
        await inspect(page, 'en-statements-1280');

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
