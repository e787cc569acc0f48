import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import type { TestGateway } from '../helpers/gateway.js';
import { workUntil } from '../helpers/tasks.js';

const TEXT = {
  'zh-CN': {
    overview: '概览',
    tasks: '任务',
    settle: '确认结算，扣费',
    settled: '已结算，结果已交付。',
  },
  en: {
    overview: 'Overview',
    tasks: 'Tasks',
    settle: 'Settle and pay',
    settled: 'Settled; the result is delivered.',
  },
} as const;

/**
 * The caller's task flow in the browser (issue 20): an image task made with `key` through `/v1`
 * shows up on the Tasks page and among what awaits funds; its page follows it live to
 * "awaiting settlement", shows the exact amount on the settle button, settles it with the
 * spec's exact body (one charge), and previews the delivered image. Returns the task's id.
 */
export async function taskFlowInBrowser(input: {
  page: Page;
  origin: string;
  gateway: TestGateway;
  accountId: string;
  key: string;
  language: keyof typeof TEXT;
  inspect: (page: Page, name: string) => Promise<void>;
}): Promise<{ taskId: string; assetId: string }> {
  const { page, origin, gateway, accountId, key, language, inspect } = input;
  const text = TEXT[language];
  const created = await fetch(`${origin}/v1/images/generations`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      'idempotency-key': randomUUID(),
    },
    body: JSON.stringify({ model: 'sim-image', prompt: 'a lighthouse', size: '256x256' }),
  });
  expect(created.status).toBe(202);
  const taskId = ((await created.json()) as { id: string }).id;

  // The task's page, opened while it is queued, follows it (polling) to awaiting settlement.
  await page.getByRole('navigation').getByRole('link', { name: text.tasks }).click();
  await page.locator(`tr[data-task-id="${taskId}"] a`).click();
  await page.locator('[data-task-status]').waitFor();
  const read = async () =>
    (
      await gateway.services.store.db
        .selectFrom('tasks')
        .select(['billing_state', 'actual_amount'])
        .where('id', '=', taskId)
        .executeTakeFirstOrThrow()
    ).billing_state;
  await workUntil(gateway, async () => (await read()) === 'pending');
  const settleButton = page.getByRole('button', { name: text.settle });
  await settleButton.waitFor({ timeout: 15_000 });
  const amount = Number(
    await page.locator('[data-actual-amount]').getAttribute('data-actual-amount'),
  );
  expect(amount).toBe(10_000);
  expect(await settleButton.textContent()).toContain('¥0.01');
  await inspect(page, `${language}-task-awaiting-settlement`);

  // The list and what awaits funds both show it.
  await page.goBack();
  await page.locator(`tr[data-awaiting-id="${taskId}"]`).waitFor();
  await inspect(page, `${language}-tasks`);
  await page.locator(`tr[data-task-id="${taskId}"] a`).click();

  const before = await gateway.balance(accountId);
  const settleAnswers: string[] = [];
  page.on('request', (request) => {
    if (request.url().endsWith(`/console/api/tasks/${taskId}/settle`))
      settleAnswers.push(request.postData() ?? '');
  });
  await page.getByRole('button', { name: text.settle }).click();
  await expect.poll(() => page.getByRole('status').last().textContent()).toBe(text.settled);
  // The spec's exact body, nothing more.
  expect(settleAnswers.map((body) => JSON.parse(body) as unknown)).toEqual([
    {
      actual_amount: 10_000,
      price_version: expect.any(String) as unknown,
      confirmation: 'settle_original_approved',
    },
  ]);
  expect(await gateway.balance(accountId)).toEqual({
    balance: before.balance - amount,
    held: 0,
    available: before.balance - amount,
  });

  // The delivered image is previewed (decoded by the browser) and offered for download.
  const image = page.locator('figure.output img');
  await image.waitFor();
  await expect
    .poll(() =>
      image.evaluate((element) => (element as unknown as { naturalWidth: number }).naturalWidth),
    )
    .toBeGreaterThan(0);
  const assetId = (await page.locator('figure.output').getAttribute('data-asset-id')) ?? '';
  expect(await page.locator('figure.output a[download]').getAttribute('href')).toBe(
    `/console/api/assets/${assetId}/content`,
  );
  await inspect(page, `${language}-task-delivered`);

  // The overview counts the settled task in today's spend, and no task is open any more.
  await page.getByRole('navigation').getByRole('link', { name: text.overview }).click();
  await expect
    .poll(() => page.locator('[data-figure="spend-today"] .amount').textContent())
    .toBe('¥0.01');
  // Each figure loads on its own ("…" until then): the open-task count may come after the spend.
  await expect.poll(() => page.locator('[data-figure="open-tasks"] a').textContent()).toBe('0');
  await inspect(page, `${language}-overview-spend`);
  return { taskId, assetId };
}

/**
 * The Requests page finds a record by its id, opens its detail with the rule that priced it,
 * and offers the CSV export of what it shows.
 */
export async function requestSearchInBrowser(input: {
  page: Page;
  requestId: string;
  language: keyof typeof TEXT;
  inspect: (page: Page, name: string) => Promise<void>;
}): Promise<void> {
  const { page, requestId, language, inspect } = input;
  await page.locator('input[name="filter-search"]').fill(requestId);
  await page.locator('form.filters button[type="submit"]').click();
  await expect.poll(() => page.locator('tr[data-request-id]').count()).toBe(1);
  expect(await page.locator('form.filters a[download]').getAttribute('href')).toBe(
    `/console/api/requests.csv?request_id=${requestId}`,
  );
  await page.locator(`tr[data-request-id="${requestId}"] button`).click();
  const rule = page.locator(`tr[data-request-detail="${requestId}"] [data-pricing-rule]`);
  await rule.waitFor();
  expect((await rule.textContent())?.length ?? 0).toBeGreaterThan(0);
  await inspect(page, `${language}-request-detail`);
}
