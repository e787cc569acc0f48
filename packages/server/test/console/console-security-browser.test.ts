import { randomUUID } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import { describeConsoleInBrowser, inspectPage, openBrowser } from '../helpers/console-browser.js';
import { testConfig } from '../helpers/gateway.js';

/**
 * The console's security controls in Chromium (issue 20, items 2–3), on a gateway that allows
 * self sign-up: a visitor signs up from the sign-in page's link, lists and ends sessions,
 * changes the password (other sessions end), turns the TOTP factor on and off, creates a key
 * limited to one model with an expiry and rotates it. In Chinese and English; axe-core and
 * screenshots on every page (`<store>-security-<language>-<page>-<size>.png`), no CSP violation.
 */
const PASSWORD = 'correct horse battery';
const NEW_PASSWORD = 'another horse battery';

const TEXT = {
  'zh-CN': {
    signIn: '登录',
    signUpLink: '没有账号？注册',
    signUp: '注册',
    signUpSubmit: '注册并登录',
    overview: '账户概览',
    security: '账号安全',
    current: '当前会话',
    endSession: '结束会话',
    changePassword: '修改密码',
    passwordChanged: '密码已修改',
    setUpTotp: '设置两步验证',
    confirmTotp: '确认并开启',
    totpOn: '两步验证已开启。',
    removeTotp: '关闭两步验证',
    totpOff: '两步验证已关闭。',
    keys: 'API 密钥',
    createKey: '创建密钥',
    rotate: '轮换',
    taken: '此邮箱不能用于注册',
  },
  en: {
    signIn: 'Sign in',
    signUpLink: 'No account? Sign up',
    signUp: 'Sign up',
    signUpSubmit: 'Sign up and sign in',
    overview: 'Overview',
    security: 'Security',
    current: 'This session',
    endSession: 'End session',
    changePassword: 'Change password',
    passwordChanged: 'Password changed',
    setUpTotp: 'Set up two-step verification',
    confirmTotp: 'Confirm and turn on',
    totpOn: 'Two-step verification is on.',
    removeTotp: 'Turn off two-step verification',
    totpOff: 'Two-step verification is off.',
    keys: 'API keys',
    createKey: 'Create key',
    rotate: 'Rotate',
    taken: 'This email cannot sign up here',
  },
} as const;

describeConsoleInBrowser(
  'console security pages in Chromium',
  { config: testConfig({ server: { ...defaultConfig.server, console_self_signup: true } }) },
  (served) => {
    const { dialect } = served;

    const inspect = (page: Page, name: string) =>
      inspectPage(page, `${dialect.name}-security-${name}`);

    /** A second session of the same user, opened outside the browser: its cookie pair. */
    const otherSession = async (email: string, password: string) => {
      const response = await served.gateway.app.inject({
        method: 'POST',
        url: '/console/api/session',
        payload: { email, password },
      });
      expect(response.statusCode).toBe(200);
      const header = response.headers['set-cookie'];
      return String(Array.isArray(header) ? header[0] : header).split(';')[0] ?? '';
    };
    const sessionAnswers = async (cookie: string) =>
      (
        await served.gateway.app.inject({
          method: 'GET',
          url: '/console/api/session',
          headers: { cookie },
        })
      ).statusCode;

    for (const language of ['zh-CN', 'en'] as const) {
      it(
        `a visitor signs up, manages sessions, password and second factor, and makes and rotates a limited key, in ${language}`,
        { timeout: 180_000 },
        async () => {
          const text = TEXT[language];
          const email = `signup-${language.toLowerCase()}-${randomUUID()}@example.test`;
          const { page, cspViolations, close } = await openBrowser(language);
          page.on('dialog', (dialog) => void dialog.accept());
          try {
            // Sign-up, linked from sign-in; an email in use is refused with the page's message.
            await page.goto(`${served.origin}/console`);
            await page.getByRole('heading', { name: text.signIn }).waitFor();
            await page.getByRole('link', { name: text.signUpLink }).click();
            await page.getByRole('heading', { name: text.signUp, exact: true }).waitFor();
            const holder = await served.gateway.account(0);
            const taken = (await served.gateway.services.accounts.get(holder.accountId)).email;
            await page.locator('input[name="signup-email"]').fill(taken);
            await page.locator('input[name="signup-password"]').fill(PASSWORD);
            await page.locator('input[name="signup-confirm"]').fill(PASSWORD);
            await page.getByRole('button', { name: text.signUpSubmit }).click();
            await expect.poll(() => page.getByRole('alert').textContent()).toContain(text.taken);
            await inspect(page, `${language}-sign-up`);
            await page.locator('input[name="signup-email"]').fill(email);
            await page.getByRole('button', { name: text.signUpSubmit }).click();
            await page.getByRole('heading', { name: text.overview }).waitFor();
            const user = await served.gateway.services.consoleUsers.byEmail(email);
            expect(user?.role).toBe('member');
            const accountId = user?.account_id ?? '';

            // Sessions: this one marked; another one ended from here.
            const second = await otherSession(email, PASSWORD);
            await page.getByRole('link', { name: text.security }).click();
            await page.getByRole('heading', { name: text.security, level: 1 }).waitFor();
            const rows = page.locator('tr[data-session-id]');
            await expect.poll(() => rows.count()).toBe(2);
            expect(await page.locator('tr[data-current]').textContent()).toContain(text.current);
            await inspect(page, `${language}-sessions`);
            await page.getByRole('button', { name: text.endSession }).click();
            await expect.poll(() => rows.count()).toBe(1);
            expect(await sessionAnswers(second)).toBe(401);

            // Password change: the other sessions end, this one stays.
            const third = await otherSession(email, PASSWORD);
            await page.locator('input[name="current-password"]').fill(PASSWORD);
            await page.locator('input[name="new-password"]').fill(NEW_PASSWORD);
            await page.locator('input[name="confirm-password"]').fill(NEW_PASSWORD);
            await page.getByRole('button', { name: text.changePassword, exact: true }).click();
            await expect
              .poll(() => page.getByRole('status').first().textContent())
              .toContain(text.passwordChanged);
            expect(await sessionAnswers(third)).toBe(401);

            // TOTP: the secret shown as text, confirmed with the app's code; then removed.
            await page.getByRole('button', { name: text.setUpTotp }).click();
            const secret = (await page.getByTestId('totp-secret').textContent()) ?? '';
            expect(await page.getByTestId('totp-uri').textContent()).toContain(`secret=${secret}`);
            await inspect(page, `${language}-totp-setup`);
            const code = new TOTP({ secret: Secret.fromBase32(secret) }).generate();
            await page.locator('input[name="totp-code"]').fill(code);
            await page.getByRole('button', { name: text.confirmTotp }).click();
            await expect
              .poll(() => page.locator('[data-totp]').getAttribute('data-totp'))
              .toBe('on');
            expect(await page.locator('[data-totp]').textContent()).toContain(text.totpOn);
            await inspect(page, `${language}-totp-on`);
            await page.locator('input[name="remove-totp-password"]').fill(NEW_PASSWORD);
            await page.getByRole('button', { name: text.removeTotp }).click();
            await expect
              .poll(() => page.locator('[data-totp]').getAttribute('data-totp'))
              .toBe('off');
            expect(await page.locator('[data-totp]').textContent()).toContain(text.totpOff);

            // Keys: one model allowed, an expiry; then rotated (the old key refused on /v1).
            const [model] = served.gateway.services.config.models.map((entry) => entry.id);
            await page.getByRole('navigation').getByRole('link', { name: text.keys }).click();
            await page.locator('input[name="key-name"]').fill('limited key');
            await page.locator(`input[name="key-model"][value="${model}"]`).check();
            const expiryDay = new Date(Date.now() + 3 * 86_400_000).toISOString().slice(0, 10);
            await page.locator('input[name="key-expiry"]').fill(expiryDay);
            await inspect(page, `${language}-keys-options`);
            await page.getByRole('button', { name: text.createKey }).click();
            const shown = page.getByTestId('new-key');
            await shown.waitFor();
            const key = (await shown.textContent()) ?? '';
            const [stored] = await served.gateway.services.keys.list(accountId);
            expect(stored).toMatchObject({ name: 'limited key', models: [model] });
            expect(stored?.expires_at?.slice(0, 10)).toBe(
              new Date(Date.parse(`${expiryDay}T23:59:59.999`)).toISOString().slice(0, 10),
            );
            const listed = await fetch(`${served.origin}/v1/models`, {
              headers: { authorization: `Bearer ${key}` },
            });
            expect(
              ((await listed.json()) as { data: { id: string }[] }).data.map((m) => m.id),
            ).toEqual([model]);
            await expect
              .poll(() =>
                page.locator(`tr[data-key-id="${stored?.id}"] [data-key-models]`).textContent(),
              )
              .toBe(model);

            await page
              .locator(`tr[data-key-id="${stored?.id}"]`)
              .getByRole('button', { name: text.rotate })
              .click();
            await expect.poll(async () => (await shown.textContent()) !== key).toBe(true);
            const rotated = (await shown.textContent()) ?? '';
            expect(rotated).toMatch(/^tgk_/);
            await inspect(page, `${language}-keys-rotated`);
            const oldKey = await fetch(`${served.origin}/v1/models`, {
              headers: { authorization: `Bearer ${key}` },
            });
            expect(oldKey.status).toBe(401);
            const newKey = await fetch(`${served.origin}/v1/models`, {
              headers: { authorization: `Bearer ${rotated}` },
            });
            expect(newKey.status).toBe(200);
            expect(cspViolations).toEqual([]);
          } finally {
            await close();
          }
        },
      );
    }

    it(
      'an operator reaches the same security page from the header, in zh-CN',
      { timeout: 120_000 },
      async () => {
        const text = TEXT['zh-CN'];
        const email = `operator-${randomUUID()}@example.test`;
        const invitation = await served.gateway.services.consoleUsers.invite({
          email,
          role: 'operator',
        });
        const token = invitation.invite_url.split('/').at(-1) ?? '';
        await served.gateway.app.inject({
          method: 'POST',
          url: `/console/api/invitations/${token}`,
          payload: { password: PASSWORD },
        });
        const { page, close } = await openBrowser('zh-CN');
        try {
          await page.goto(`${served.origin}/console`);
          await page.locator('input[name="email"]').fill(email);
          await page.locator('input[name="password"]').fill(PASSWORD);
          await page.getByRole('button', { name: text.signIn }).click();
          await page.getByRole('link', { name: text.security }).click();
          await page.getByRole('heading', { name: text.security, level: 1 }).waitFor();
          await expect.poll(() => page.locator('tr[data-current]').count()).toBe(1);
          expect(await page.locator('[data-totp]').getAttribute('data-totp')).toBe('off');
          await inspect(page, 'zh-CN-operator');
        } finally {
          await close();
        }
      },
    );

    it(
      "a proxy's HTML 502 or an unreachable gateway on sign-in is told as such, not as a JSON parse error",
      { timeout: 60_000 },
      async () => {
        const { page, close } = await openBrowser('en');
        try {
          await page.goto(`${served.origin}/console`);
          await page.getByRole('heading', { name: TEXT.en.signIn }).waitFor();
          // What nginx answers while every gateway behind it is down: HTML, status 502.
          await page.route('**/console/api/session', (route) =>
            route.request().method() === 'POST'
              ? route.fulfill({
                  status: 502,
                  contentType: 'text/html',
                  body: '<html><body><h1>502 Bad Gateway</h1></body></html>',
                })
              : route.continue(),
          );
          await page.locator('input[name="email"]').fill('nobody@example.test');
          await page.locator('input[name="password"]').fill(PASSWORD);
          await page.getByRole('button', { name: TEXT.en.signIn }).click();
          await expect
            .poll(() => page.getByRole('alert').textContent())
            .toContain('HTTP 502 Bad Gateway: the answer is text/html, not an error in JSON');
          const shown = (await page.getByRole('alert').textContent()) ?? '';
          expect(shown).toContain("The gateway's answer could not be read");
          expect(shown).not.toMatch(/SyntaxError|Unexpected token|JSON\.parse/);
          // No answer at all (the connection refused or cut).
          await page.unroute('**/console/api/session');
          await page.route('**/console/api/session', (route) =>
            route.request().method() === 'POST'
              ? route.abort('connectionrefused')
              : route.continue(),
          );
          await page.getByRole('button', { name: TEXT.en.signIn }).click();
          await expect
            .poll(() => page.getByRole('alert').textContent())
            .toContain('The gateway could not be reached.');
        } finally {
          await close();
        }
      },
    );
  },
);
