import { expect, it } from 'vitest';
import { describeConsoleInBrowser, inspectPage } from '../helpers/console-browser.js';
import { shortTimeoutsConfig } from '../helpers/gateway.js';
import { finishedTask, type TaskBody } from '../helpers/tasks.js';
import {
  expectAmountsShownOneWay,
  geometryProblems,
  signedInThroughInvitation,
} from './browser-pages.js';

/**
 * The member's wallet page, `/console/billing`, in Chromium (issue 36, item 2): reached from the
 * navigation, in Chinese and in English, with no page error and no CSP violation; the balance,
 * the open holds (a task awaiting settlement, an unconfirmed request) each explained, every
 * movement with the balance after it, every kind and state in the viewer's language (no message
 * key and no wire value shown); every amount yuan with two decimals and its exact micro-yuan on
 * hover; no table or control outside its card at 1280 px; the statement downloaded as CSV; a
 * period without movements; the links to top-up and redemption and back. Screenshots and axe-core
 * (helpers/console-browser.ts).
 */

const TEXT = {
  'zh-CN': {
    overview: '账户概览',
    nav: '钱包与账单',
    title: '钱包与账单',
    show: '查看',
    csv: '下载 CSV 账单',
    none: '这段期间没有流水。',
    topUp: '在线充值',
    redeemInstead: '有兑换码？在兑换码页面充值。',
    kinds: {
      topup: '充值',
      redemption: '兑换码',
      hold: '冻结',
      capture: '扣费',
      release: '释放',
      refund: '退款',
    },
    unconfirmed: '结果未确认',
    pending: '成功 · 待结算',
  },
  en: {
    overview: 'Overview',
    nav: 'Wallet',
    title: 'Wallet and statement',
    show: 'Show',
    csv: 'Download the statement (CSV)',
    none: 'No movement in this period.',
    topUp: 'Top up online',
    redeemInstead: 'Have a redemption code? Redeem it instead.',
    kinds: {
      topup: 'Top-up',
      redemption: 'Redemption',
      hold: 'Hold',
      capture: 'Charge',
      release: 'Release',
      refund: 'Refund',
    },
    unconfirmed: 'Outcome unconfirmed',
    pending: 'Succeeded · Awaiting settlement',
  },
} as const;

describeConsoleInBrowser(
  'the wallet page in Chromium',
  { config: shortTimeoutsConfig() },
  (served) => {
    const { dialect } = served;

    for (const language of ['zh-CN', 'en'] as const) {
      it(
        `a member reads their wallet, its holds and movements, and downloads the CSV, in ${language}`,
        { timeout: 180_000 },
        async () => {
          const text = TEXT[language];
          const gateway = served.gateway;
          // A top-up and a code, a charge, a failed request (released), a task awaiting settlement
          // and an unconfirmed request (both holding), from a named key and an unnamed one.
          const account = await gateway.account(3_000_000);
          const [code] = await gateway.services.accounts.createRedemptionCodes({
            amount: 1_234_567,
            count: 1,
          });
          await gateway.services.accounts.redeem(account.accountId, { code: code?.code });
          const named = await gateway.newKey(account.accountId, {
            name: 'a key for the nightly batch of reports',
          });
          const chat = await gateway.call('POST', '/v1/chat/completions', {
            key: named.key,
            body: { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] },
          });
          expect(chat.statusCode, chat.body).toBe(200);
          const failed = await gateway.call('POST', '/v1/embeddings', {
            key: account.key,
            body: { model: 'sim-embed', input: 'no [sim:fail=500]' },
          });
          expect(failed.statusCode).toBe(502);
          const created = await gateway.call('POST', '/v1/images/generations', {
            key: named.key,
            body: { model: 'sim-image', prompt: 'a lighthouse', size: '256x256' },
          });
          expect(created.statusCode, created.body).toBe(202);
          const task = await finishedTask(
            gateway,
            named.key,
            `/v1/images/${created.json<TaskBody>().id}`,
          );
          expect(task.billing.state).toBe('pending');
          const hung = await gateway.call('POST', '/v1/embeddings', {
            key: account.key,
            body: { model: 'sim-embed', input: 'wait [sim:hang]' },
          });
          expect(hung.statusCode).toBe(504);

          const pageErrors: string[] = [];
          const { page, cspViolations, close } = await signedInThroughInvitation(served, {
            language,
            invitee: { role: 'member', account_id: account.accountId },
            label: 'wallet',
            watch: (opened) => opened.on('pageerror', (error) => pageErrors.push(error.message)),
          });
          try {
            await page.getByRole('heading', { name: text.overview }).waitFor();

            await page
              .getByRole('navigation')
              .getByRole('link', { name: text.nav, exact: true })
              .click();
            await page.getByRole('heading', { name: text.title, level: 1 }).waitFor();
            expect(new URL(page.url()).pathname).toBe('/console/billing');
            const holds = page.locator('[data-wallet-holds] tbody tr');
            await expect.poll(() => holds.count()).toBe(2);
            const movements = page.locator('tr[data-movement-kind]');
            await expect.poll(() => movements.count()).toBe(8);

            // The holds: the task awaiting settlement (until when) and the unconfirmed request.
            const taskHold = page.locator('tr[data-hold-kind="task"]');
            expect(await taskHold.getAttribute('data-released-by')).toBe('task_settled');
            expect(await taskHold.textContent()).toContain(task.id);
            expect(await taskHold.textContent()).toContain(
              'a key for the nightly batch of reports',
            );
            expect(await taskHold.textContent()).toContain(text.pending);
            expect(await taskHold.locator('time').count()).toBe(2);
            const requestHold = page.locator('tr[data-hold-kind="request"]');
            expect(await requestHold.getAttribute('data-released-by')).toBe('request_reconciled');
            expect(await requestHold.textContent()).toContain(
              String(hung.headers['x-service-request-id']),
            );
            expect(await requestHold.textContent()).toContain(text.unconfirmed);
            expect(await requestHold.locator('code.key-hint').count()).toBe(1);

            // Every kind in the viewer's words; no message key, no wire value in the page's text.
            const kinds = await movements.evaluateAll((rows) =>
              rows.map((row) => ({
                kind: (row as unknown as { dataset: { movementKind: string } }).dataset
                  .movementKind,
                cell: (row as unknown as { cells: { textContent: string }[] }).cells[1]
                  ?.textContent,
              })),
            );
            for (const { kind, cell } of kinds)
              expect(cell).toBe(text.kinds[kind as keyof typeof text.kinds]);
            expect(new Set(kinds.map(({ kind }) => kind))).toEqual(
              new Set(['topup', 'redemption', 'hold', 'capture', 'release']),
            );
            const visible = await page.locator('main').innerText();
            expect(visible).not.toMatch(/\b(wallet|state)\.[A-Za-z_.]+/);
            for (const raw of [
              'submission_unknown',
              'request_reconciled',
              'task_settled',
              'awaiting_funds',
            ])
              expect(visible).not.toContain(raw);
            // The last movement's balance is the balance shown above.
            const lastBalance = await movements
              .last()
              .locator('td')
              .nth(4)
              .locator('.amount')
              .getAttribute('title');
            expect(lastBalance).toBe(
              await page.locator('[data-figure="balance"] .amount').getAttribute('title'),
            );

            expect(await geometryProblems(page)).toEqual([]);
            expect(await expectAmountsShownOneWay(page, language)).toBeGreaterThan(20);
            await inspectPage(page, `${dialect.name}-wallet-${language}`);

            // The statement of the period as CSV, named by the gateway, in micro-yuan.
            const link = page.getByRole('link', { name: text.csv });
            expect(await link.getAttribute('href')).toBe('/console/api/wallet/statement.csv');
            const downloading = page.waitForEvent('download');
            await link.click();
            const download = await downloading;
            expect(download.suggestedFilename()).toMatch(
              new RegExp(
                `^wallet-${account.accountId}-\\d{4}-\\d{2}-\\d{2}-\\d{4}-\\d{2}-\\d{2}\\.csv$`,
              ),
            );

            // A period before the account: nothing moved, the CSV link follows the period.
            await page.locator('input[name="wallet-from"]').fill('2020-01-01');
            await page.locator('input[name="wallet-to"]').fill('2020-01-31');
            await page.getByRole('button', { name: text.show }).click();
            await page.getByText(text.none).waitFor();
            expect(await link.getAttribute('href')).toBe(
              '/console/api/wallet/statement.csv?from=2020-01-01&to=2020-01-31',
            );
            expect(await geometryProblems(page)).toEqual([]);
            await expectAmountsShownOneWay(page, language);

            // To the top-up page, which links to redemption and back to the wallet.
            await page
              .locator('[data-wallet-links]')
              .getByRole('link', { name: text.topUp })
              .click();
            await page.getByRole('link', { name: text.redeemInstead }).waitFor();
            await page.locator('[data-topup-links] a[href="/console/billing"]').click();
            await page.getByRole('heading', { name: text.title, level: 1 }).waitFor();

            expect(pageErrors).toEqual([]);
            expect(cspViolations).toEqual([]);
          } finally {
            await close();
          }
        },
      );
    }
  },
);
