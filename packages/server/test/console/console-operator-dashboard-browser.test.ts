import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import type { ConfigFile } from '../../src/config/schema.js';
import { describeConsoleInBrowser, inspectPage } from '../helpers/console-browser.js';
import { testConfig } from '../helpers/gateway.js';
import { finishedRequest, unknownOutcome } from '../helpers/records.js';
import { succeeded } from '../usage/spend.js';
import {
  expectAmountsShownOneWay,
  geometryProblems,
  signedInThroughInvitation,
} from './browser-pages.js';

/**
 * The operator's dashboard, request log and code batches in Chromium (issue 36, item 6), in
 * Chinese and in English: both pages load with no page error and no failed request; every
 * amount is yuan with two decimals (`<¥0.01` under one fen) and its exact micro-yuan on hover;
 * no text is a message key left untranslated; at 1280 px no table scrolls and no control ends
 * outside its card; the log's pickers (an account found by its email, one of its keys, a model,
 * a status) narrow the rows and "load more" adds the next page without repeating one; a batch's
 * unredeemed codes are voided after a confirmation. Screenshots and axe-core on each page
 * (helpers/console-browser.ts).
 */

const TEXT = {
  'zh-CN': {
    accounts: '账户',
    dashboard: '仪表盘',
    log: '请求日志',
    codes: '兑换码',
    apply: '筛选',
    clear: '清除筛选',
    more: '加载更多',
    void: '作废未兑换的',
    succeeded: '成功',
    unknown: '提交结果未知',
  },
  en: {
    accounts: 'Accounts',
    dashboard: 'Dashboard',
    log: 'Request log',
    codes: 'Redemption codes',
    apply: 'Apply',
    clear: 'Clear',
    more: 'Load more',
    void: 'Void unredeemed',
    succeeded: 'Succeeded',
    unknown: 'Submission unknown',
  },
} as const;

function modelOf(id: string) {
  const model = defaultConfig.models.find((each) => each.id === id);
  if (model === undefined) throw new Error(`no ${id}`);
  return model;
}

/** sim-chat on a channel with a cost (a margin to show), sim-embed on one without. */
function config(): ConfigFile {
  const { upstream: _single, ...chat } = modelOf('sim-chat');
  return testConfig({
    models: [
      {
        ...chat,
        channels: [
          {
            id: 'chat-with-a-rather-long-channel-name',
            upstream: 'simulator',
            model: 'sim-chat',
            cost: { input_per_million_tokens: 1_500_000, output_per_million_tokens: 6_000_000 },
          },
        ],
      },
      modelOf('sim-embed'),
    ],
  });
}

/** No message key shown as itself (a text the dictionaries lack: `op.status.…`). */
async function expectTranslated(page: Page): Promise<void> {
  const text = await page.locator('main').innerText();
  expect(text).not.toMatch(/\bop\.[a-z]+\.[a-zA-Z_]+/);
}

describeConsoleInBrowser(
  'operator dashboard and request log in Chromium',
  { config: config() },
  (served) => {
    const { dialect } = served;

    it(
      'both pages load in Chinese and English: figures in yuan, tables inside their cards, pickers narrow the log, a batch voided',
      { timeout: 240_000 },
      async () => {
        const gateway = served.gateway;
        // Two accounts, long emails; chats (with a channel cost) and embeddings; a record whose
        // outcome is unknown (held money, the queue); 25 small charges (more than a page).
        const alpha = await gateway.account(200_000_000, { name: 'alpha reports nightly batch' });
        const beta = await gateway.account(80_000_000, { name: 'beta' });
        const betaEmail = String(
          (await gateway.admin('GET', `/admin/v1/accounts/${beta.accountId}`))['email'],
        );
        const call = async (key: string, path: string, body: unknown) => {
          const response = await gateway.call('POST', path, { key, body });
          expect(response.statusCode, response.body).toBe(200);
        };
        for (const [key, words] of [
          [alpha.key, 'a long question about the month'],
          [beta.key, 'hi'],
        ] as const)
          await call(key, '/v1/chat/completions', {
            model: 'sim-chat',
            max_tokens: 60,
            messages: [{ role: 'user', content: words }],
          });
        await call(beta.key, '/v1/embeddings', { model: 'sim-embed', input: 'a few words' });
        await finishedRequest(gateway.services, {
          key: beta.key,
          hold: 12_345,
          outcome: unknownOutcome,
        });
        for (let index = 0; index < 25; index += 1)
          await finishedRequest(gateway.services, {
            key: alpha.key,
            hold: 50_000,
            outcome: succeeded(1_234 * (index + 1)),
          });
        const created = await gateway.admin('POST', '/admin/v1/redemption-codes/batches', {
          amount: 3_330_000,
          count: 3,
        });
        const codes = (created['data'] as { code: string }[]).map((each) => each.code);
        await gateway.admin('POST', `/admin/v1/accounts/${beta.accountId}/redemptions`, {
          code: codes[0],
        });

        for (const language of ['zh-CN', 'en'] as const) {
          const text = TEXT[language];
          const pageErrors: string[] = [];
          const failed: string[] = [];
          const { page, cspViolations, close } = await signedInThroughInvitation(served, {
            language,
            invitee: { role: 'operator' },
            label: `dashboard-${language}`,
            watch: (opened) => {
              opened.on('pageerror', (error) => pageErrors.push(error.message));
              opened.on('requestfailed', (request) =>
                failed.push(`${request.method()} ${request.url()}`),
              );
            },
          });
          const shot = (name: string) =>
            inspectPage(page, `${dialect.name}-operator-dashboard-${language}-${name}`);
          try {
            await page.getByRole('heading', { name: text.accounts, exact: true }).waitFor();
            // Signed in: from here every answer of the console API must be a success.
            page.on('response', (response) => {
              if (response.status() >= 400)
                failed.push(
                  `${response.status()} ${response.request().method()} ${response.url()}`,
                );
            });

            // The dashboard, from the operator navigation.
            await page.getByRole('link', { name: text.dashboard, exact: true }).click();
            expect(new URL(page.url()).pathname).toBe('/console/admin/dashboard');
            await page.locator('[data-figure="revenue"] .amount').waitFor();
            await page.locator('canvas[data-spend-chart]').waitFor();
            await page
              .locator('tr[data-dashboard-channel="chat-with-a-rather-long-channel-name"]')
              .waitFor();
            const revenue = Number(
              ((await page.locator('[data-figure="revenue"] .amount').getAttribute('title')) ?? '')
                .split(' ')[0]
                ?.replaceAll(',', ''),
            );
            const charged =
              200_000_000 -
              (await gateway.balance(alpha.accountId)).balance +
              (80_000_000 + 3_330_000 - (await gateway.balance(beta.accountId)).balance);
            expect(revenue).toBe(charged);
            expect(
              await page.locator('[data-figure="held"] .amount').first().getAttribute('title'),
            ).toMatch(/^12,345 /);
            expect(await page.locator('[data-figure="unresolved"] a').textContent()).toBe('1');
            expect(await page.locator('tr[data-dashboard-account]').count()).toBe(2);
            expect(await expectAmountsShownOneWay(page, language)).toBeGreaterThan(20);
            expect(await geometryProblems(page)).toEqual([]);
            await expectTranslated(page);
            await shot('dashboard');

            // The request log: every record, newest first, a page at a time.
            await page.getByRole('link', { name: text.log, exact: true }).click();
            expect(new URL(page.url()).pathname).toBe('/console/admin/requests');
            const rows = page.locator('tr[data-log-request]');
            await expect.poll(() => rows.count()).toBe(20);
            await page.getByRole('button', { name: text.more }).click();
            await expect.poll(() => rows.count()).toBe(29);
            const ids = await rows.evaluateAll((all) =>
              all.map(
                (row) => (row as unknown as { dataset: { logRequest: string } }).dataset.logRequest,
              ),
            );
            expect(new Set(ids).size).toBe(29);
            await expect.poll(() => page.getByRole('button', { name: text.more }).count()).toBe(0);
            expect(await page.locator('td[data-status="succeeded"]').first().textContent()).toBe(
              text.succeeded,
            );
            expect(await expectAmountsShownOneWay(page, language)).toBeGreaterThan(20);
            expect(await geometryProblems(page)).toEqual([]);
            await expectTranslated(page);
            await shot('requests');

            // Pickers: the account found by part of its email, then its key; then a status.
            await page.locator('input[name="log-account-search"]').fill(betaEmail.slice(0, 12));
            await page
              .locator(`select[name="log-account"] option[value="${beta.accountId}"]`)
              .waitFor({ state: 'attached' });
            await page.locator('select[name="log-account"]').selectOption(beta.accountId);
            await page
              .locator(`select[name="log-key"] option[value="${beta.keyId}"]`)
              .waitFor({ state: 'attached' });
            await page.locator('select[name="log-key"]').selectOption(beta.keyId);
            await page.getByRole('button', { name: text.apply, exact: true }).click();
            await expect.poll(() => rows.count()).toBe(3);
            await page.locator('select[name="log-model"]').selectOption('sim-embed');
            await page.getByRole('button', { name: text.apply, exact: true }).click();
            await expect.poll(() => rows.count()).toBe(2);
            await page.locator('select[name="log-status"]').selectOption('submission_unknown');
            await page.getByRole('button', { name: text.apply, exact: true }).click();
            await expect.poll(() => rows.count()).toBe(1);
            expect(await page.locator('td[data-status]').textContent()).toBe(text.unknown);
            await page.getByRole('button', { name: text.clear, exact: true }).click();
            await expect.poll(() => rows.count()).toBe(20);
            expect(await geometryProblems(page)).toEqual([]);

            // The codes page: the batch, one code redeemed; voided (Chinese), then as it stays.
            await page.getByRole('link', { name: text.codes, exact: true }).click();
            const batch = page.locator('tr[data-batch-id]').filter({
              has: page.locator('td[data-redeemed="1"]'),
            });
            await batch.waitFor();
            if (language === 'zh-CN') {
              expect(await batch.locator('td[data-unredeemed]').textContent()).toBe('2');
              await batch.getByRole('button', { name: text.void }).click();
              await expect.poll(() => batch.locator('td[data-unredeemed]').textContent()).toBe('0');
            }
            expect(await batch.locator('td[data-voided]').textContent()).toBe('2');
            expect(await batch.getByRole('button', { name: text.void }).count()).toBe(0);
            expect(await expectAmountsShownOneWay(page, language)).toBeGreaterThan(1);
            expect(await geometryProblems(page)).toEqual([]);
            await expectTranslated(page);
            await shot('codes');

            expect(pageErrors).toEqual([]);
            expect(failed).toEqual([]);
            expect(cspViolations).toEqual([]);
          } finally {
            await close();
          }
        }
        // The voided codes are refused; the redeemed one stayed redeemed.
        const refused = await gateway.app.inject({
          method: 'POST',
          url: `/admin/v1/accounts/${alpha.accountId}/redemptions`,
          headers: { authorization: 'Bearer test-admin-token-0123456789' },
          payload: { code: codes[1] },
        });
        expect(refused.statusCode).toBe(404);
        await gateway.expectLedgerClean();
      },
    );
  },
);
