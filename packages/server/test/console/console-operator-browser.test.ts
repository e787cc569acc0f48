import { readFileSync } from 'node:fs';
import { Secret, TOTP } from 'otpauth';
import { expect, it } from 'vitest';
import { describeConsoleInBrowser, inspectPage, openBrowser } from '../helpers/console-browser.js';
import { CONSOLE_PASSWORD } from '../helpers/console-session.js';
import { png } from '../helpers/media.js';
import { finishedRequest, unknownOutcome } from '../helpers/records.js';

/**
 * The operator's pages in a real browser, in Chinese (the default): an operator signs in, tops
 * up an account and sets its budget, approves a share after seeing its preview, resolves a
 * submission_unknown record with a capture, finds each action in the audit log, and disables
 * and enables a channel; every page screenshot and checked with axe-core. On one store, in the
 * suite's one Chromium (helpers/console-browser.ts says which and why).
 */

/** The code an authenticator app shows for `secret` at `at` (ms). */
const codeOf = (secret: string, at: number) =>
  new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: at });

describeConsoleInBrowser('operator console in Chromium', {}, (served) => {
  const { dialect } = served;

  it(
    'an operator tops up, approves a share and resolves a record, each in the audit log',
    { timeout: 180_000 },
    async () => {
      const { accountId, key } = await served.gateway.account(1_000_000);
      const uploaded = await served.gateway.upload(key, png(32, 16), 'image/png');
      const assetId = uploaded.json<{ data: { id: string } }>().data.id;
      const asked = await served.gateway.call('POST', '/v1/shares', {
        key,
        body: { asset_id: assetId },
      });
      const shareId = asked.json<{ id: string }>().id;
      const requestId = await finishedRequest(served.gateway.services, {
        key,
        hold: 5_000,
        outcome: unknownOutcome,
      });
      // Another account's chat whose upstream reports usage far beyond its cap: flagged.
      const flaggedAccount = await served.gateway.account(10_000_000);
      const overCap = await served.gateway.call('POST', '/v1/chat/completions', {
        key: flaggedAccount.key,
        body: {
          model: 'sim-chat',
          max_tokens: 5,
          messages: [{ role: 'user', content: 'hi [sim:extra_tokens=100000]' }],
        },
      });
      const flaggedId = String(overCap.headers['x-service-request-id']);
      const email = `ops-${dialect.name}@example.test`;
      const invitation = await served.gateway.services.consoleUsers.invite({
        email,
        role: 'operator',
      });

      const { page, cspViolations, close } = await openBrowser('zh-CN');
      const shot = (name: string) => inspectPage(page, `${dialect.name}-operator-${name}`);
      try {
        await page.goto(`${served.origin}${invitation.invite_url}`);
        await page.locator('input[name="new-password"]').fill(CONSOLE_PASSWORD);
        await page.locator('input[name="confirm-password"]').fill(CONSOLE_PASSWORD);
        await page.getByRole('button', { name: '设置密码并登录' }).click();

        // Accounts: find it, open it, top up 12.5 yuan.
        await page.getByRole('heading', { name: '账户', exact: true }).waitFor();
        await page.locator(`tr[data-account-id="${accountId}"] a`).click();
        await page.locator('input[name="topup-amount"]').fill('12.5');
        await page.locator('input[name="topup-reference"]').fill('bank-transfer-1');
        await page.getByRole('button', { name: '充值' }).click();
        await expect.poll(() => page.locator('.success .amount').textContent()).toBe('¥13.50');
        expect((await served.gateway.balance(accountId)).balance).toBe(13_500_000);
        // A budget of 7.25 yuan a week: sent as exact micro-yuan, shown on the admin account.
        const budgetForm = page.locator('form[data-budget-form="accounts"]');
        await budgetForm.locator(`input[name="budget-limit-${accountId}"]`).fill('7.25');
        await budgetForm.locator('select').selectOption('weekly');
        await budgetForm.getByRole('button', { name: '保存预算' }).click();
        await page.locator('[data-account-budget] [data-budget-limit="7250000"]').waitFor();
        expect(await served.gateway.admin('GET', `/admin/v1/accounts/${accountId}`)).toMatchObject({
          budget: { limit: 7_250_000, window: 'weekly' },
        });
        // The key's allowed IPs, one a line, shown in the keys table once saved.
        await page.getByRole('button', { name: '编辑' }).click();
        const limits = page.locator('[data-key-limits]');
        await limits.locator('textarea').fill('203.0.113.7\n10.0.0.0/8');
        await limits.getByRole('button', { name: '保存 IP 列表' }).click();
        await page.getByRole('cell', { name: '203.0.113.7/32, 10.0.0.0/8' }).waitFor();
        await shot('account');

        // Share review: the preview loads; approve.
        await page.getByRole('link', { name: '分享审核' }).click();
        const card = page.locator(`[data-share-id="${shareId}"]`);
        await card.waitFor();
        await expect
          .poll(() =>
            card
              .locator('img')
              .evaluate((image) => (image as unknown as { naturalWidth: number }).naturalWidth),
          )
          .toBe(32);
        await shot('shares');
        await card.getByRole('button', { name: '通过' }).click();
        await card.waitFor({ state: 'detached' });
        const share = await served.gateway.admin('GET', `/admin/v1/shares/${shareId}`);
        expect(share['state']).toBe('approved');

        // Resolution: capture 3,000 micro-yuan (typed as 0.003 yuan) of the 5,000 held, with a reason.
        await page.getByRole('link', { name: '待处理记录' }).click();
        const form = page.locator(`form[data-record-id="${requestId}"]`);
        await form.waitFor();
        await form.getByLabel('扣款（上游已执行）').check();
        await form.locator('input[name="resolve-amount"]').fill('0.003');
        await form.locator('input[name="resolve-reason"]').fill('upstream log shows it ran');
        await shot('resolve');
        await form.getByRole('button', { name: '提交' }).click();
        await form.waitFor({ state: 'detached' });
        expect(await served.gateway.balance(accountId)).toMatchObject({
          balance: 13_497_000,
          held: 0,
        });

        // The audit log names each action; the ledger check is clean.
        await page.getByRole('link', { name: '审计日志' }).click();
        for (const action of ['account.top_up', 'share.approve', 'request.resolve_capture'])
          await page.locator(`tr[data-audit-action="${action}"]`).first().waitFor();
        await shot('audit');
        await page.getByRole('link', { name: '账本检查' }).click();
        await page.getByRole('button', { name: '运行账本检查' }).click();
        await page.locator('[data-ledger="clean"]').waitFor();
        await shot('ledger');
        await page.getByRole('link', { name: '在线充值订单' }).click();
        await page.getByRole('heading', { name: '在线充值订单' }).waitFor();
        await page.getByRole('checkbox', { name: /只看需处理的/ }).check();
        await page.getByRole('region', { name: '在线充值订单' }).waitFor();
        await shot('payments');
        await page.getByRole('link', { name: '邀请用户' }).click();
        await page.getByRole('heading', { name: '邀请用户' }).waitFor();
        await shot('invite');

        // Redemption codes: a batch of two, downloaded as the server's CSV.
        await page.getByRole('link', { name: '兑换码' }).click();
        await page.locator('input[name="codes-amount"]').fill('5');
        await page.locator('input[name="codes-count"]').fill('2');
        const [download] = await Promise.all([
          page.waitForEvent('download'),
          page.getByRole('button', { name: '生成并下载 CSV' }).click(),
        ]);
        const csv = readFileSync((await download.path()) ?? '', 'utf8');
        expect(csv.trim().split('\r\n')).toHaveLength(3);
        expect(csv).toContain(',5000000,');
        await page.getByRole('status').waitFor();
        await shot('codes');

        // Models: read only; a model's prices saved as a new version.
        await page.getByRole('link', { name: '模型与价格' }).click();
        await page.locator('tr[data-model-id="sim-chat"] button').click();
        await page.locator('[data-price-version="sim-chat@1"]').waitFor();
        await page.getByRole('button', { name: '保存为新版本' }).click();
        await page.locator('[data-price-version="sim-chat@2"]').waitFor();
        await shot('models');

        // Channels: one disabled with a reason (state shown, audited), then enabled again.
        await page.getByRole('link', { name: '渠道' }).click();
        const channelRow = page.locator('tr[data-channel-id]').first();
        const channelId = (await channelRow.getAttribute('data-channel-id')) ?? '';
        await channelRow.locator('input').fill('upstream maintenance');
        await channelRow.getByRole('button', { name: '停用' }).click();
        await channelRow.locator('[data-channel-state="disabled"]').waitFor();
        await shot('channels');
        expect(
          await served.gateway.admin('GET', '/admin/v1/audit?action=channel.disable'),
        ).toMatchObject({
          data: [{ target_id: channelId, reason: 'upstream maintenance' }],
        });
        await channelRow.getByRole('button', { name: '启用' }).click();
        await channelRow.locator('[data-channel-state="active"]').waitFor();

        // Usage beyond the cap: the flagged record listed, reviewed with a note, gone.
        const operations = page.getByRole('navigation', { name: '运营' });
        await operations.getByRole('link', { name: '超上限用量' }).click();
        const flaggedRow = page.locator(`tr[data-flagged-id="${flaggedId}"]`);
        await flaggedRow.waitFor();
        expect(await flaggedRow.textContent()).toContain('completion_tokens');
        await shot('usage-cap');
        await flaggedRow.locator('input').fill('simulated upstream over-report');
        await flaggedRow.getByRole('button', { name: '标记为已审核' }).click();
        await flaggedRow.waitFor({ state: 'detached' });
        const reviewed = await served.gateway.admin('GET', `/admin/v1/requests/${flaggedId}`);
        expect(reviewed['usage_exceeded_cap']).toMatchObject({
          review: 'simulated upstream over-report',
        });

        // Statements: the account's movements with its closing balance; the CSV downloaded.
        await operations.getByRole('link', { name: '对账单' }).click();
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
        await page.getByRole('button', { name: '查看' }).click();
        const closing = page.locator('[data-statement] [data-figure="closing"] .amount');
        await closing.waitFor();
        const { balance } = await served.gateway.balance(accountId);
        expect(await closing.getAttribute('title')).toBe(`${balance.toLocaleString('en-US')} 微元`);
        await page.locator('tr[data-movement-kind="topup"]').first().waitFor();
        await page.locator('tr[data-movement-kind="capture"]').first().waitFor();
        await shot('statements');
        const [statementFile] = await Promise.all([
          page.waitForEvent('download'),
          page.getByRole('link', { name: '下载 CSV' }).click(),
        ]);
        const statementCsv = readFileSync((await statementFile.path()) ?? '', 'utf8');
        expect(statementFile.suggestedFilename()).toMatch(/^statement-acct_.*\.csv$/);
        expect(statementCsv.trim().split('\r\n').at(-1)).toContain(`,closing,,${balance},`);

        // A second factor: set up through the API in this session; then the sign-in page asks for
        // the code after the password, and a fresh code signs in.
        const at = Date.now();
        const secret = await page.evaluate(async () => {
          const state = (await (await fetch('/console/api/session')).json()) as {
            csrf_token: string;
          };
          const setup = await fetch('/console/api/totp', {
            method: 'POST',
            headers: { 'x-csrf-token': state.csrf_token },
          });
          return ((await setup.json()) as { secret: string }).secret;
        });
        const enabled = await page.evaluate(
          async (code) => {
            const state = (await (await fetch('/console/api/session')).json()) as {
              csrf_token: string;
            };
            const answer = await fetch('/console/api/totp/enable', {
              method: 'POST',
              headers: { 'x-csrf-token': state.csrf_token, 'content-type': 'application/json' },
              body: JSON.stringify({ code }),
            });
            return answer.status;
          },
          codeOf(secret, at),
        );
        expect(enabled).toBe(204);
        await page.getByRole('button', { name: '退出登录' }).click();
        await page.locator('input[name="email"]').fill(email);
        await page.locator('input[name="password"]').fill(CONSOLE_PASSWORD);
        await page.getByRole('button', { name: '登录' }).click();
        await page.locator('input[name="totp"]').fill(codeOf(secret, at + 30_000));
        await shot('sign-in-totp');
        await page.getByRole('button', { name: '登录' }).click();
        await page.getByRole('navigation', { name: '运营' }).waitFor();
        expect(cspViolations).toEqual([]);
      } finally {
        await close();
      }
      await served.gateway.expectLedgerClean();
    },
  );
});
