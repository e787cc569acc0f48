import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { describeConsoleInBrowser, inspectPage, openBrowser } from '../helpers/console-browser.js';
import { shareFlowInBrowser } from './browser-share-flow.js';
import { requestSearchInBrowser, taskFlowInBrowser } from './browser-task-flow.js';

/**
 * The console in a real browser (Debian's Chromium through playwright-core): a member invited
 * by an operator sets a password, signs in, creates a key (shown once), redeems a code, uses the
 * key on /v1 and finds the request in the console, shares a delivered image (approved by an
 * operator, opened without a key) and uploads a file; in Chinese and in English. Every page is
 * screenshot at 1280x800 and 390x844 into test/console/screenshots/ (not committed) and checked
 * with axe-core (no serious or critical violation) and for CSP violations (none).
 */
const PASSWORD = 'correct horse battery';

const TEXT = {
  'zh-CN': {
    overview: '账户概览',
    navOverview: '概览',
    keys: 'API 密钥',
    redeem: '兑换码',
    topUp: '在线充值',
    topUpOff: '本网关未开通在线支付',
    requests: '请求记录',
    createKey: '创建密钥',
    shownOnce: '此密钥只显示这一次',
    redeemButton: '兑换',
    signOut: '退出登录',
    signIn: '登录',
    wrong: '邮箱或密码错误。',
    microYuan: '微元',
    setPassword: '设置密码并登录',
    models: '模型与价格',
    modelsTitle: '模型与价格',
    keyNotOptional: 'Codex CLI 和 Claude Code 用不了',
    input: '输入，每百万 tokens',
  },
  en: {
    overview: 'Overview',
    navOverview: 'Overview',
    keys: 'API keys',
    redeem: 'Redeem code',
    topUp: 'Top up online',
    topUpOff: 'Online payment is not set up on this gateway',
    requests: 'Requests',
    createKey: 'Create key',
    shownOnce: 'This key is shown only this once',
    redeemButton: 'Redeem',
    signOut: 'Sign out',
    signIn: 'Sign in',
    wrong: 'Wrong email or password.',
    microYuan: 'micro-yuan',
    setPassword: 'Set password and sign in',
    models: 'Models',
    modelsTitle: 'Models and prices',
    keyNotOptional: 'Codex CLI and Claude Code cannot use it',
    input: 'Input, per million tokens',
  },
} as const;

type Language = keyof typeof TEXT;

describeConsoleInBrowser('console in Chromium', {}, (served) => {
  const { dialect } = served;

  const browser = (language: Language) => openBrowser(language);
  /** Screenshots named after the store, at both sizes, then axe-core (helpers/console-browser.ts). */
  const inspect = (page: Page, name: string) => inspectPage(page, `${dialect.name}-${name}`);

  for (const language of ['zh-CN', 'en'] as const) {
    it(
      `a member goes from invitation to a used key and its request, in ${language}`,
      { timeout: 180_000 },
      async () => {
        const text = TEXT[language];
        const account = await served.gateway.account(0);
        const email = `browser-${language.toLowerCase()}-${randomUUID()}@example.test`;
        const invitation = await served.gateway.services.consoleUsers.invite({
          email,
          role: 'member',
          account_id: account.accountId,
        });
        const { page, cspViolations, context, close } = await browser(language);
        page.on('dialog', (dialog) => void dialog.accept());
        try {
          // Invitation: set the password; the page signs in and shows the overview.
          await page.goto(`${served.origin}${invitation.invite_url}`);
          await expect.poll(() => page.locator('.invite-email').textContent()).toBe(email);
          expect(await page.getAttribute('html', 'lang')).toBe(language);
          await inspect(page, `${language}-invite`);
          await page.locator('input[name="new-password"]').fill(PASSWORD);
          await page.locator('input[name="confirm-password"]').fill(PASSWORD);
          await page.getByRole('button', { name: text.setPassword }).click();
          await page.getByRole('heading', { name: text.overview }).waitFor();
          await expect
            .poll(() => page.locator('[data-figure="balance"] .amount').textContent())
            .toBe('¥0.00');
          await inspect(page, `${language}-overview-empty`);

          // Keys: created, shown once, gone after a reload.
          await page.getByRole('navigation').getByRole('link', { name: text.keys }).click();
          await page.locator('input[name="key-name"]').fill('browser key');
          await page.getByRole('button', { name: text.createKey }).click();
          const shown = page.getByTestId('new-key');
          await shown.waitFor();
          const key = (await shown.textContent()) ?? '';
          expect(key).toMatch(/^tgk_[0-9A-Za-z]{49}$/);
          await expect.poll(() => page.getByRole('status').textContent()).toContain(text.shownOnce);
          // How to call with it: this gateway's base URL, the key in the snippets, and (a key
          // that requires an Idempotency-Key) the warning that the coding agents need another.
          const panel = page.locator('[data-how-to-call]');
          await expect
            .poll(() => panel.getByTestId('base-url').textContent())
            .toBe(`${served.origin}/v1`);
          expect(await panel.locator('[data-snippet="curl"] code').textContent()).toContain(
            `Bearer ${key}`,
          );
          expect(await panel.locator('[data-snippet="codex-config"] code').textContent()).toContain(
            `base_url = "${served.origin}/v1"`,
          );
          expect(await panel.locator('[data-snippet="claude-env"] code').textContent()).toContain(
            `ANTHROPIC_AUTH_TOKEN=${key}`,
          );
          expect(await panel.locator('.warning').textContent()).toContain(text.keyNotOptional);
          await inspect(page, `${language}-keys-created`);
          await page.reload();
          await page.locator(`tr[data-key-id]`).first().waitFor();
          expect(await page.getByTestId('new-key').count()).toBe(0);
          expect(await page.content()).not.toContain(key);
          expect(await page.locator('tbody').textContent()).toContain(key.slice(-4));
          await inspect(page, `${language}-keys`);
          expect(await page.getByTestId('base-url').textContent()).toBe(`${served.origin}/v1`);

          // Models: what the key may call (every model), each price as the price book has it,
          // in yuan with the exact micro-yuan on hover; the snippets with the placeholder.
          await page.getByRole('navigation').getByRole('link', { name: text.models }).click();
          await page.getByRole('heading', { name: text.modelsTitle, level: 1 }).waitFor();
          const chatCard = page.locator('[data-model-id="sim-chat"]');
          await chatCard.waitFor();
          expect(await page.locator('[data-models-basis]').getAttribute('data-models-basis')).toBe(
            'keys',
          );
          expect(await page.locator('[data-model-id]').count()).toBe(
            served.gateway.services.config.models.length,
          );
          const chatPrice = await served.gateway.services.prices.currentFor('sim-chat');
          const inputRow = chatCard.locator('tr[data-price="models.price.input"]');
          expect(await inputRow.locator('td').first().textContent()).toBe(text.input);
          const inputMicro = chatPrice.prices.input_per_million_tokens ?? -1;
          expect(await inputRow.locator('[data-micro]').getAttribute('data-micro')).toBe(
            String(inputMicro),
          );
          expect(await inputRow.locator('.amount').getAttribute('title')).toContain(text.microYuan);
          expect(await chatCard.locator('code').first().textContent()).toBe('sim-chat');
          expect(await page.locator('[data-snippet="curl"] code').textContent()).toContain(
            'Bearer tgk_…',
          );
          expect(await page.content()).not.toContain(key);
          expect(
            await page.locator('[data-model-id="sim-h3"] [data-micro]').count(),
          ).toBeGreaterThan(4);
          await inspect(page, `${language}-models`);

          // Redeem: the balance changes.
          const code = await served.gateway.services.accounts.createRedemptionCode({
            amount: 2_000_000,
          });
          await page.getByRole('navigation').getByRole('link', { name: text.redeem }).click();
          await page.locator('input[name="code"]').fill(code.code);
          await page.getByRole('button', { name: text.redeemButton, exact: true }).click();
          await expect.poll(() => page.locator('.success .amount').textContent()).toBe('¥2.00');
          await inspect(page, `${language}-redeem`);
          expect((await served.gateway.balance(account.accountId)).balance).toBe(2_000_000);
          // Online top-up: this gateway has no payment provider, and the page says so.
          await page.getByRole('navigation').getByRole('link', { name: text.topUp }).click();
          await expect.poll(() => page.getByRole('note').textContent()).toContain(text.topUpOff);
          await inspect(page, `${language}-topup`);
          // An operator's budget on the account shows on the member's overview.
          await served.gateway.admin('PUT', `/admin/v1/accounts/${account.accountId}/budget`, {
            limit: 5_000_000,
            window: 'monthly',
          });
          await page.getByRole('navigation').getByRole('link', { name: text.navOverview }).click();
          const balance = page.locator('[data-figure="balance"] .amount');
          await expect.poll(() => balance.textContent()).toBe('¥2.00');
          expect(await balance.getAttribute('title')).toBe(`2,000,000 ${text.microYuan}`);
          expect(await page.locator('[data-figure="budget"] .amount').textContent()).toBe('¥5.00');
          await inspect(page, `${language}-overview`);

          // Tasks: an image task made with the key, settled and previewed in the console.
          const { taskId } = await taskFlowInBrowser({
            page,
            origin: served.origin,
            gateway: served.gateway,
            accountId: account.accountId,
            key,
            language,
            inspect,
          });
          // Shares and files: asked for from the task, approved, the link opened without a key.
          await shareFlowInBrowser({
            page,
            origin: served.origin,
            gateway: served.gateway,
            taskId,
            language,
            password: PASSWORD,
            inspect,
          });

          // The new key on /v1; its request appears in the console.
          const chat = await fetch(`${served.origin}/v1/chat/completions`, {
            method: 'POST',
            headers: {
              authorization: `Bearer ${key}`,
              'content-type': 'application/json',
              'idempotency-key': randomUUID(),
            },
            body: JSON.stringify({
              model: 'sim-chat',
              messages: [{ role: 'user', content: 'hi' }],
            }),
          });
          expect(chat.status).toBe(200);
          const requestId = chat.headers.get('x-service-request-id') ?? '';
          await page.getByRole('navigation').getByRole('link', { name: text.requests }).click();
          const row = page.locator(`tr[data-request-id="${requestId}"]`);
          await row.waitFor();
          expect(await row.textContent()).toContain('sim-chat');
          await inspect(page, `${language}-requests`);
          await requestSearchInBrowser({ page, requestId, language, inspect });

          // Overview: the spend chart is drawn (a canvas with pixels on it) and the table of
          // its figures stays beside it, as the accessible alternative.
          await page.getByRole('navigation').getByRole('link', { name: text.navOverview }).click();
          const chart = page.locator('canvas[data-spend-chart]');
          await chart.waitFor();
          expect(await chart.getAttribute('role')).toBe('img');
          await expect
            .poll(() =>
              chart.evaluate((canvas) => {
                const drawn = canvas as unknown as {
                  width: number;
                  height: number;
                  getContext(kind: '2d'): { getImageData(...box: number[]): { data: number[] } };
                };
                const pixels = drawn.getContext('2d').getImageData(0, 0, drawn.width, drawn.height);
                let painted = 0;
                for (let index = 3; index < pixels.data.length; index += 4)
                  if ((pixels.data[index] ?? 0) > 0) painted += 1;
                return painted;
              }),
            )
            .toBeGreaterThan(1000);
          const spendRows = page.locator('[aria-label] table tbody tr');
          expect(await spendRows.count()).toBeGreaterThan(0);
          expect(await spendRows.first().textContent()).toMatch(/sim-/);
          await inspect(page, `${language}-overview-chart`);

          // Keys: the browser key's spend over 30 days is everything the account spent (the
          // account's other key spent nothing).
          const spent = (await served.gateway.call('GET', '/v1/account/usage', { key })).json<{
            totals: { amount: number };
          }>().totals.amount;
          expect(spent).toBeGreaterThan(0);
          await page.getByRole('navigation').getByRole('link', { name: text.keys }).click();
          const keyRow = page.locator('tr[data-key-id]', { hasText: 'browser key' });
          await expect
            .poll(() => keyRow.locator('[data-key-spend] .amount').getAttribute('title'))
            .toBe(`${spent.toLocaleString('en-US')} ${text.microYuan}`);
          await inspect(page, `${language}-keys-spend`);
          await page.getByRole('navigation').getByRole('link', { name: text.requests }).click();
          await page.locator(`tr[data-request-id="${requestId}"]`).waitFor();

          // The session cookie opens nothing on /v1; the key opens nothing on /console/api; a
          // state-changing call without the CSRF token is refused.
          const cookies = await context.cookies(`${served.origin}/console/`);
          const session = cookies.find((cookie) => cookie.name === 'tollgate_console');
          expect(session?.httpOnly).toBe(true);
          expect(session?.sameSite).toBe('Lax');
          expect(session?.path).toBe('/console');
          const cookieOnV1 = await fetch(`${served.origin}/v1/requests`, {
            headers: { cookie: `tollgate_console=${session?.value ?? ''}` },
          });
          expect(cookieOnV1.status).toBe(401);
          const keyOnConsole = await fetch(`${served.origin}/console/api/account`, {
            headers: { authorization: `Bearer ${key}` },
          });
          expect(keyOnConsole.status).toBe(401);
          const withoutCsrf = await page.evaluate(async () => {
            const response = await fetch('/console/api/keys', {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ name: 'forged' }),
            });
            return response.status;
          });
          expect(withoutCsrf).toBe(403);
          expect(
            (await served.gateway.services.keys.list(account.accountId)).map((row) => row.name),
          ).not.toContain('forged');

          // Sign out; a wrong password is refused; the right one signs in again.
          await page.getByRole('button', { name: text.signOut }).click();
          await page.getByRole('heading', { name: text.signIn }).waitFor();
          await page.locator('input[name="email"]').fill(email);
          await page.locator('input[name="password"]').fill('wrong password 123');
          await page.getByRole('button', { name: text.signIn }).click();
          await expect.poll(() => page.getByRole('alert').textContent()).toBe(text.wrong);
          await inspect(page, `${language}-sign-in-refused`);
          await page.locator('input[name="password"]').fill(PASSWORD);
          await page.getByRole('button', { name: text.signIn }).click();
          // Back on the page that was open when the session ended.
          await page.locator(`tr[data-request-id="${requestId}"]`).waitFor();
          expect(cspViolations).toEqual([]);
        } finally {
          await close();
        }
        await served.gateway.expectLedgerClean();
      },
    );
  }

  it('the language switch is remembered across reloads', { timeout: 120_000 }, async () => {
    const { page, close } = await browser('zh-CN');
    try {
      await page.goto(`${served.origin}/console`);
      await page.getByRole('heading', { name: TEXT['zh-CN'].signIn }).waitFor();
      await page.getByRole('combobox').selectOption('en');
      await page.getByRole('heading', { name: TEXT.en.signIn }).waitFor();
      await page.reload();
      await page.getByRole('heading', { name: TEXT.en.signIn }).waitFor();
      expect(await page.getAttribute('html', 'lang')).toBe('en');
      await inspect(page, 'en-sign-in');
    } finally {
      await close();
    }
  });
});
