import { expect, it } from 'vitest';
import { describeConsoleInBrowser, inspectPage, openBrowser } from '../helpers/console-browser.js';
import { CONSOLE_PASSWORD } from '../helpers/console-session.js';

/**
 * The operator's price editor (docs/console.md, "Models and prices") in a real browser, in
 * Chinese: a token price typed in yuan per million tokens is echoed as the micro-yuan it saves,
 * kept in step with the JSON view (both ways), saved exactly; a price with too many decimals is
 * refused with its reason and nothing is saved. Started and signed in as
 * console-operator-browser.test.ts does.
 */

interface PriceVersion {
  price_version: string;
  prices: Record<string, unknown>;
}

describeConsoleInBrowser('operator price editor in Chromium', {}, (served) => {
  const { dialect } = served;
  // A model's current prices: the newest of its history (the admin API lists it newest first).
  const current = async (model: string): Promise<PriceVersion> => {
    const history = await served.gateway.admin('GET', `/admin/v1/models/${model}/prices`);
    const [newest] = history['data'] as PriceVersion[];
    if (newest === undefined) throw new Error(`no prices for ${model}`);
    return { price_version: newest.price_version, prices: newest.prices };
  };

  it(
    'saves a price typed in yuan as exact micro-yuan, and refuses a bad one',
    { timeout: 120_000 },
    async () => {
      const before = await current('sim-chat');
      const invitation = await served.gateway.services.consoleUsers.invite({
        email: `prices-${dialect.name}@example.test`,
        role: 'operator',
      });
      const { page, cspViolations, close } = await openBrowser('zh-CN');
      try {
        await page.goto(`${served.origin}${invitation.invite_url}`);
        await page.locator('input[name="new-password"]').fill(CONSOLE_PASSWORD);
        await page.locator('input[name="confirm-password"]').fill(CONSOLE_PASSWORD);
        await page.getByRole('button', { name: '设置密码并登录' }).click();
        await page.getByRole('link', { name: '模型与价格' }).click();
        await page.locator('tr[data-model-id="sim-chat"] button').click();
        const editor = page.locator('[data-price-editor="sim-chat"]');
        await editor.locator(`[data-price-version="${before.price_version}"]`).waitFor();

        // The form starts from the current prices, in yuan.
        const input = editor.locator('input[name="price-input_per_million_tokens"]');
        const cached = editor.locator('input[name="price-cached_input_per_million_tokens"]');
        expect(await input.inputValue()).toBe('2');
        expect(await cached.inputValue()).toBe('0.5');
        const json = editor.locator('textarea[name="prices"]');
        expect(await json.isVisible()).toBe(false);

        // 2.5 yuan per million tokens: echoed as 2,500,000 micro-yuan, and in the JSON.
        await input.fill('2.5');
        const echo = editor.locator('[data-price-field="input_per_million_tokens"] .micro-echo');
        await expect.poll(() => echo.getAttribute('data-micro-echo')).toBe('2500000');
        expect(await echo.textContent()).toBe('= 2,500,000 微元');
        await editor.getByRole('button', { name: '显示 JSON' }).click();
        expect(JSON.parse(await json.inputValue())).toMatchObject({
          input_per_million_tokens: 2_500_000,
          cached_input_per_million_tokens: 500_000,
        });
        // The JSON edited: the form follows.
        const edited = JSON.parse(await json.inputValue()) as Record<string, unknown>;
        await json.fill(JSON.stringify({ ...edited, output_per_million_tokens: 9_100_000 }));
        await expect
          .poll(() => editor.locator('input[name="price-output_per_million_tokens"]').inputValue())
          .toBe('9.1');
        await inspectPage(page, `${dialect.name}-operator-price-editor`);

        await editor.getByRole('button', { name: '保存为新版本' }).click();
        await expect
          .poll(async () => (await current('sim-chat')).price_version)
          .not.toBe(before.price_version);
        const after = await current('sim-chat');
        expect(after.prices).toMatchObject({
          input_per_million_tokens: 2_500_000,
          output_per_million_tokens: 9_100_000,
          cached_input_per_million_tokens: 500_000,
        });
        await editor.locator(`[data-price-version="${after.price_version}"]`).waitFor();

        // Seven decimals of a yuan: refused with its reason, in the form; nothing is saved.
        await input.fill('1.0000001');
        const reason = await echo.textContent();
        expect(reason).toContain('最多 6 位小数');
        expect(await input.getAttribute('aria-invalid')).toBe('true');
        expect(JSON.parse(await json.inputValue())).toMatchObject({
          input_per_million_tokens: 2_500_000,
        });
        await editor.getByRole('button', { name: '保存为新版本' }).click();
        await editor.getByRole('alert').waitFor();
        expect(await editor.getByRole('alert').textContent()).toContain('未保存任何内容');
        await inspectPage(page, `${dialect.name}-operator-price-editor-refused`);
        expect(await current('sim-chat')).toEqual(after);
        expect(cspViolations).toEqual([]);
      } finally {
        await close();
      }
    },
  );
});
