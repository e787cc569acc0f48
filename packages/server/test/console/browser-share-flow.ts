import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { openBrowser } from '../helpers/console-browser.js';
import type { TestGateway } from '../helpers/gateway.js';
import { png } from '../helpers/media.js';

const TEXT = {
  'zh-CN': {
    share: '申请公开分享',
    asked: '已申请分享，等待运营人员审核。',
    shares: '分享',
    assets: '文件',
    review: '分享审核',
    approve: '通过',
    setPassword: '设置密码并登录',
    approved: '已通过',
  },
  en: {
    share: 'Ask for a public share',
    asked: 'Share asked for; an operator reviews it.',
    shares: 'Shares',
    assets: 'Files',
    review: 'Share review',
    approve: 'Approve',
    setPassword: 'Set password and sign in',
    approved: 'Approved',
  },
} as const;

const naturalWidth = (page: Page, selector: string) =>
  page
    .locator(selector)
    .first()
    .evaluate((image) => (image as unknown as { naturalWidth: number }).naturalWidth);

/**
 * Sharing from the console in the browser (issue 20): on the delivered task's page the member asks
 * for a share of its image; an operator, in a browser of their own, approves it on the review
 * page; the member's Shares page then shows the public link, which a page holding no key and no
 * console cookie opens to the image. Then the Files page uploads a picture (a file input, as a
 * person choosing a file) and shows it with its preview.
 */
export async function shareFlowInBrowser(input: {
  page: Page;
  origin: string;
  gateway: TestGateway;
  taskId: string;
  language: keyof typeof TEXT;
  password: string;
  inspect: (page: Page, name: string) => Promise<void>;
}): Promise<void> {
  const { page, origin, gateway, taskId, language, inspect } = input;
  const text = TEXT[language];

  await page.goto(`${origin}/console/tasks/${taskId}`);
  await page.getByRole('button', { name: text.share }).click();
  const asked = page.locator('span[data-share-id]');
  await expect.poll(() => asked.textContent()).toContain(text.asked);
  const shareId = (await asked.getAttribute('data-share-id')) ?? '';
  expect(shareId).toMatch(/^share_/);

  // An operator approves it on the review page, after its preview has loaded.
  const operatorEmail = `ops-${language.toLowerCase()}-${randomUUID()}@example.test`;
  const invitation = await gateway.services.consoleUsers.invite({
    email: operatorEmail,
    role: 'operator',
  });
  const operator = await openBrowser(language);
  try {
    await operator.page.goto(`${origin}${invitation.invite_url}`);
    await operator.page.locator('input[name="new-password"]').fill(input.password);
    await operator.page.locator('input[name="confirm-password"]').fill(input.password);
    await operator.page.getByRole('button', { name: text.setPassword }).click();
    await operator.page.getByRole('link', { name: text.review }).click();
    const card = operator.page.locator(`[data-share-id="${shareId}"]`);
    await card.waitFor();
    await expect
      .poll(() => naturalWidth(operator.page, `[data-share-id="${shareId}"] img`))
      .toBeGreaterThan(0);
    await card.getByRole('button', { name: text.approve }).click();
    await card.waitFor({ state: 'detached' });
  } finally {
    await operator.close();
  }

  // The member's Shares page shows the link; opened without any key or cookie, it is the image.
  await page.getByRole('navigation').getByRole('link', { name: text.shares, exact: true }).click();
  const shareCard = page.locator(`article[data-share-id="${shareId}"]`);
  await shareCard.waitFor();
  expect(await shareCard.getAttribute('data-share-state')).toBe('approved');
  const link = (await shareCard.locator('[data-public-link]').getAttribute('href')) ?? '';
  expect(link).toMatch(new RegExp(`^${origin}/s/[0-9A-Za-z]{43}$`));
  await inspect(page, `${language}-shares`);
  const stranger = await openBrowser(language);
  try {
    expect(await stranger.context.cookies()).toEqual([]);
    const served = await stranger.page.goto(link);
    expect(served?.status()).toBe(200);
    expect(served?.headers()['content-type']).toMatch(/^image\//);
    await expect.poll(() => naturalWidth(stranger.page, 'img')).toBeGreaterThan(0);
  } finally {
    await stranger.close();
  }

  // Files: a picture chosen in the file input is uploaded, listed and previewed.
  await page.getByRole('navigation').getByRole('link', { name: text.assets }).click();
  await page.locator('input[type="file"]').setInputFiles({
    name: 'browser-upload.png',
    mimeType: 'image/png',
    buffer: png(24, 12),
  });
  const uploaded = page.locator('article[data-asset-id]', { hasText: 'browser-upload.png' });
  await uploaded.waitFor();
  await expect
    .poll(() =>
      uploaded
        .locator('img')
        .evaluate((image) => (image as unknown as { naturalWidth: number }).naturalWidth),
    )
    .toBe(24);
  await inspect(page, `${language}-assets`);
}
