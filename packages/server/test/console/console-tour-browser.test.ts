import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import {
  describeConsoleInBrowser,
  SCREENSHOTS,
  SCREENSHOTS_TAKEN,
} from '../helpers/console-browser.js';
import type { TestGateway } from '../helpers/gateway.js';
import { png } from '../helpers/media.js';
import { finishedRequest, unknownOutcome } from '../helpers/records.js';
import { workUntil } from '../helpers/tasks.js';
import {
  amountProblems,
  geometryProblems,
  signedInThroughInvitation,
  type Invitee,
  type Language,
} from './browser-pages.js';

/**
 * A tour of every console page (issue 36, items 3, 4, 5 and 7): as a member and as an operator,
 * in Chinese and in English, in one Chromium against one gateway, the pages visited in turn. Each
 * page is audited by the same functions (below) and fails the tour on:
 *
 * - an untranslated value of the wire shown in Chinese: a record's status, a task's state or
 *   kind, an audit action, a movement's kind, a share's or an order's state, … (`WIRE_VALUES`);
 * - a message key shown as itself (a message the dictionaries lack), in either language;
 * - at 1280 px, a control outside the viewport or outside its card, the page scrolling sideways,
 *   or a table scrolling inside its box (it must fit its card at that width; browser-pages.ts
 *   `geometryProblems`);
 * - a page error, a request that failed or a console API answer of 400 or more;
 * - an amount with more than two decimals in the page's text, or an amount (`.amount`) that is
 *   not yuan with two decimals, cut toward zero from the exact micro-yuan on its hover
 *   (`<¥0.01` under one fen; browser-pages.ts `amountProblems`).
 *
 * The data has the widest rows the pages show (a key limited to two models with an expiry, a
 * request charged less than one fen, a task still queued, a long top-up reference), so that the
 * geometry is checked where it is tightest: the other browser suites leave these checks to it.
 *
 * Each page's screenshot (1280 wide, the whole page) is kept in test/console/screenshots/
 * (git-ignored) as `<store>-tour-<role>-<language>-<page>.png`, for a person to look at (not in
 * CI: TOLLGATE_TEST_SCREENSHOTS=0, helpers/console-browser.ts).
 */

/**
 * Every value of the wire the console must show in words, never as itself in Chinese: record
 * statuses, task states, billing states and kinds, audit actions (docs/audit.md), journal and
 * statement movement kinds, what ends a hold, share and order states, breaker states, key kinds,
 * roles, budget windows, line items, usage counts and API families.
 */
const WIRE_VALUES = [
  // Records (protocol RequestStatus).
  'processing',
  'succeeded',
  'failed',
  'accepted',
  'awaiting_funds',
  'submission_unknown',
  'resolved',
  // Tasks: status, billing state, kind.
  'queued',
  'running',
  'FAILED',
  'reserved',
  'pending',
  'settled',
  'released',
  'expired',
  'image.task',
  'video.task',
  'h3.task',
  'image',
  'video',
  // Audit actions.
  'account.create',
  'account.top_up',
  'account.redeem',
  'account.set_budget',
  'account.remove_budget',
  'redemption_code.create',
  'redemption_code.create_batch',
  'redemption_code.void_batch',
  'key.create',
  'key.disable',
  'key.rotate',
  'key.set_budget',
  'key.remove_budget',
  'key.set_allowed_ips',
  'prices.set',
  'channel.disable',
  'channel.enable',
  'request.resolve_capture',
  'request.resolve_release',
  'request.review_usage',
  'task.resolve_release',
  'task.resolve_attach',
  'share.approve',
  'share.reject',
  'share.revoke',
  'console_user.invite',
  'console_user.disable',
  'console_user.enable',
  'payment.credit',
  'payment.refund',
  'payment.flagged',
  // Journal and statement movements; what ends a hold.
  'topup',
  'redemption',
  'hold',
  'capture',
  'release',
  'refund',
  'request_finishes',
  'request_settled',
  'request_reconciled',
  'task_finishes',
  'task_settled',
  'task_reconciled',
  // Shares and online top-up orders.
  'pending_review',
  'approved',
  'rejected',
  'revoked',
  'created',
  'paid',
  'amount_mismatch',
  'balance_limit',
  'refunded_partially',
  'refunded',
  // Channels, keys, users, budgets.
  'closed',
  'open',
  'half_open',
  'personal',
  'service',
  'member',
  'operator',
  'daily',
  'weekly',
  'monthly',
  // Line items and usage counts.
  'input',
  'output',
  'cache_read',
  'cache_write',
  'cache_write_1h',
  'reasoning',
  'video_second',
  'reference_image',
  'input_token',
  'output_token',
  'prompt_tokens',
  'completion_tokens',
  'total_tokens',
  'cached_tokens',
  'reasoning_tokens',
  // API families.
  'chat',
  'embeddings',
  'rerank',
  'images',
  'videos',
] as const;

const escaped = (value: string) => value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A wire value as a word of its own: not part of an id, a model, a path, an address or a file
 * name (`sim-image`, `/v1/chat/completions`, `redemption:rdm_…`, `image/png`); a value
 * followed by a colon and a space (`capture: …`) is a word.
 */
const WIRE_VALUE = new RegExp(
  `(?<![\\w\\-./:@…])(${WIRE_VALUES.map(escaped).join('|')})(?![\\w\\-/@]|[.:]\\w)`,
  'g',
);

/** A message key shown as itself (`op.status.…`, `record.status.…`): a text the registry lacks. */
const MESSAGE_KEY =
  /(?<![\w\-./:@])(?:op|wallet|state|record|task|audit|error|rule|key|lineItem|usage|share|shares|topup|nav|common|money|status|spend|tasks|requests|awaiting|models|keys|journal|security|howToCall|keyOptions)\.[a-z][A-Za-z_]*(?:\.[A-Za-z_]+)*/;

/** A key's id shown as text where its name belongs (`key_0mx…`). */
const KEY_ID = /(?<![\w-])key_[0-9A-Za-z]{6,}/;

/** An amount written with more than two decimals (`¥0.001234`, `0.000001 元`, `1.234567 yuan`). */
const LONG_AMOUNT = /[¥￥]\s?-?[\d,]*\.\d{3,}|\d\.\d{3,}\s?(?:元|yuan|CNY)/;

/** What a person reads on the page: its visible text, code snippets (`pre`) left out. */
async function visibleText(page: Page): Promise<string> {
  return page.evaluate(`(() => {
    let text = document.body.innerText;
    for (const snippet of document.querySelectorAll('pre')) text = text.split(snippet.innerText).join(' ');
    return text;
  })()`);
}

/** Wire values shown as words in `text` (each once). */
function wireValuesIn(text: string): string[] {
  return [...new Set([...text.matchAll(WIRE_VALUE)].map((match) => match[1] ?? ''))];
}

/** What the tour saw go wrong while a page was shown: page errors and failed requests. */
interface Watch {
  readonly errors: string[];
  readonly inFlight: Set<unknown>;
}

/** Records into `seen` what goes wrong on `page` from now on. */
function watch(page: Page, seen: Watch): void {
  page.on('pageerror', (error) => seen.errors.push(`page error: ${error.message}`));
  page.on('request', (request) => seen.inFlight.add(request));
  page.on('requestfinished', (request) => seen.inFlight.delete(request));
  page.on('requestfailed', (request) => {
    seen.inFlight.delete(request);
    seen.errors.push(`request failed: ${request.method()} ${request.url()}`);
  });
  page.on('response', (response) => {
    if (response.status() >= 400)
      seen.errors.push(
        `${response.status()} ${response.request().method()} ${new URL(response.url()).pathname}`,
      );
  });
}

/** Until no request is in flight and nothing says "loading" (twice in a row, 30 ms apart). */
async function settled(page: Page, seen: Watch, language: Language): Promise<void> {
  const loading = language === 'zh-CN' ? '加载中…' : 'Loading…';
  let quiet = 0;
  const deadline = Date.now() + 10_000;
  while (quiet < 2) {
    if (Date.now() > deadline) throw new Error(`the page did not settle: ${page.url()}`);
    await page.waitForTimeout(30);
    const busy = seen.inFlight.size > 0 || (await page.getByText(loading).count()) > 0;
    quiet = busy ? 0 : quiet + 1;
  }
}

/**
 * One page of the tour: opened, waited for (`ready`, then quiet), audited, screenshot. Returns
 * what the audits found (empty: the page passes).
 */
async function auditPage(
  page: Page,
  seen: Watch,
  language: Language,
  name: string,
  keyIdsShown: boolean,
): Promise<string[]> {
  await settled(page, seen, language);
  const text = await visibleText(page);
  const problems = [
    ...seen.errors.splice(0),
    ...(language === 'zh-CN'
      ? wireValuesIn(text).map((value) => `an untranslated value: ${value}`)
      : []),
    ...(MESSAGE_KEY.test(text) ? [`a message key: ${MESSAGE_KEY.exec(text)?.[0]}`] : []),
    ...(LONG_AMOUNT.test(text) ? [`more than two decimals: ${LONG_AMOUNT.exec(text)?.[0]}`] : []),
    ...(!keyIdsShown && KEY_ID.test(text) ? [`a key by its id: ${KEY_ID.exec(text)?.[0]}`] : []),
    ...(await amountProblems(page, language)).problems,
    ...(await geometryProblems(page)),
  ];
  if (SCREENSHOTS_TAKEN)
    await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
  return problems.map((problem) => `${name}: ${problem}`);
}

/** A stop of the tour: the path after /console and what shows the page has its data. */
interface Stop {
  readonly name: string;
  readonly path: string;
  readonly ready: string;
  /** What to do on the page before it is audited (open a detail, run a check). */
  readonly act?: (page: Page) => Promise<void>;
  /** The page names keys by their ids on purpose (the audit log's targets); else never. */
  readonly keyIds?: true;
}

/** A member of an account with what every page of theirs shows, and an operator's data. */
async function tourData(gateway: TestGateway) {
  const member = await gateway.account(50_000_000, { name: 'the nightly batch of reports' });
  const unnamed = await gateway.newKey(member.accountId);
  // The keys page's widest row: a long name, an allowlist of two models, an expiry.
  const limited = await gateway.newKey(member.accountId, {
    name: 'a key for the nightly batch of reports',
    models: ['sim-chat', 'sim-image'],
    expires_at: new Date(Date.now() + 30 * 86_400_000).toISOString(),
  });
  const post = async (key: string, url: string, body: unknown, status = 200) => {
    const response = await gateway.call('POST', url, { key, body });
    expect(response.statusCode, response.body).toBe(status);
    return response.json<Record<string, unknown>>();
  };
  await gateway.admin('POST', `/admin/v1/accounts/${member.accountId}/topups`, {
    amount: 1_234_567,
    reference: `bank-transfer-${randomUUID()}`,
  });
  const chat = {
    model: 'sim-chat',
    max_tokens: 40,
    messages: [{ role: 'user', content: 'a question about the month' }],
  };
  await post(member.key, '/v1/chat/completions', chat);
  await post(unnamed.key, '/v1/embeddings', { model: 'sim-embed', input: 'a few words' });
  // Usage far beyond the cap: billed at the cap, flagged for the operator.
  await post(member.key, '/v1/chat/completions', {
    ...chat,
    max_tokens: 5,
    messages: [{ role: 'user', content: 'hi [sim:extra_tokens=100000]' }],
  });
  const unknown = await finishedRequest(gateway.services, {
    key: member.key,
    hold: 12_345,
    outcome: unknownOutcome,
  });
  // Two image tasks priced: one settled and shared (the review queue), one awaiting settlement.
  const image = { model: 'sim-image', prompt: 'a lighthouse', size: '256x256' };
  const shared = String((await post(member.key, '/v1/images/generations', image, 202))['id']);
  const waiting = String((await post(member.key, '/v1/images/generations', image, 202))['id']);
  const billingOf = async (id: string) =>
    gateway.services.store.db
      .selectFrom('tasks')
      .select(['billing_state', 'actual_amount'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
  await workUntil(gateway, async () =>
    (await Promise.all([shared, waiting].map(billingOf))).every(
      (task) => task.billing_state === 'pending',
    ),
  );
  const task = await gateway.call('GET', `/v1/images/${shared}`, { key: member.key });
  const billing = task.json<{ billing: { actual_amount: number; price_version: string } }>()
    .billing;
  await post(member.key, `/v1/images/${shared}/settle`, {
    actual_amount: billing.actual_amount,
    price_version: billing.price_version,
    confirmation: 'settle_original_approved',
  });
  await post(member.key, '/v1/shares', { task_id: shared }, 202);
  // A task still queued (no worker runs after this): the tasks page's widest row.
  await post(limited.key, '/v1/images/generations', image, 202);
  // A charge under one fen, shown `<¥0.01` with its exact micro-yuan on hover.
  await post(limited.key, '/v1/chat/completions', {
    model: 'sim-chat',
    messages: [{ role: 'user', content: 'hi' }],
  });
  const uploaded = await gateway.upload(unnamed.key, png(48, 32), 'image/png');
  expect(uploaded.statusCode, uploaded.body).toBeLessThan(300);
  await gateway.admin('POST', '/admin/v1/redemption-codes/batches', {
    amount: 3_330_000,
    count: 3,
  });
  return { member, unknown, shared, waiting };
}

describeConsoleInBrowser('console tour in Chromium', {}, (served) => {
  const { dialect } = served;

  it('the audits see what they look for, and nothing else', () => {
    expect(
      wireValuesIn(
        '状态 succeeded · 类型 image.task · 操作 account.top_up · capture: ¥0.01 · awaiting_funds',
      ),
    ).toEqual(['succeeded', 'image.task', 'account.top_up', 'capture', 'awaiting_funds']);
    // Ids, models, paths, addresses, media types and references are not values shown as words.
    expect(
      wireValuesIn(
        'sim-image · POST /v1/chat/completions · image/png · redemption:rdm_1 · req_succeeded · open-ai · a@open.test',
      ),
    ).toEqual([]);
    expect(MESSAGE_KEY.exec('状态 op.status.succeeded')?.[0]).toBe('op.status.succeeded');
    expect(MESSAGE_KEY.test('tgk_…abcd · sim-chat@1 · 127.0.0.1 · example.test')).toBe(false);
    for (const long of ['¥0.001234', '¥1,234.567', '0.000001 元', '1.234567 yuan'])
      expect(LONG_AMOUNT.test(long), long).toBe(true);
    for (const fine of ['¥0.01', '<¥0.01', '¥1,234,567.89', '= 3,000 微元', '1.5 GB', 'v1.2.3'])
      expect(LONG_AMOUNT.test(fine), fine).toBe(false);
    expect(KEY_ID.test('密钥 key_0mxash537Gjl3BYuiOAn0HOuN')).toBe(true);
    expect(KEY_ID.test('the nightly batch of reports · tgk_…MstD')).toBe(false);
  });

  it(
    'every page as a member and as an operator, in zh-CN and en: translated, inside its card, no error, two decimals',
    { timeout: 120_000 },
    async () => {
      const { member, unknown, shared, waiting } = await tourData(served.gateway);

      const memberStops: Stop[] = [
        { name: 'overview', path: '/', ready: 'canvas[data-spend-chart]' },
        { name: 'keys', path: '/keys', ready: 'canvas[data-key-spend-chart]' },
        { name: 'models', path: '/models', ready: '[data-model-id="sim-chat"] tr[data-price]' },
        { name: 'redeem', path: '/redeem', ready: `tr[data-awaiting-id="${waiting}"]` },
        { name: 'topup', path: '/topup', ready: 'main h2' },
        { name: 'billing', path: '/billing', ready: 'tr[data-movement-kind="capture"]' },
        {
          name: 'requests',
          path: '/requests',
          ready: 'tr[data-request-id]',
          act: async (page) => {
            await page
              .locator('tr[data-request-id]', { hasText: 'sim-chat' })
              .last()
              .locator('button')
              .click();
            await page.locator('[data-request-detail] [data-line-item]').first().waitFor();
          },
        },
        { name: 'tasks', path: '/tasks', ready: `tr[data-task-id="${shared}"]` },
        { name: 'task-waiting', path: `/tasks/${waiting}`, ready: '[data-settle]' },
        { name: 'task-delivered', path: `/tasks/${shared}`, ready: 'figure.output img' },
        { name: 'assets', path: '/assets', ready: '[data-asset-id]' },
        { name: 'shares', path: '/shares', ready: '[data-share-id]' },
        { name: 'security', path: '/security', ready: '[data-totp]' },
        { name: '404', path: '/no-such-page', ready: '[data-status-page="404"]' },
        { name: '403', path: '/admin/accounts', ready: '[data-status-page="403"]' },
      ];
      const operatorStops: Stop[] = [
        { name: 'dashboard', path: '/admin/dashboard', ready: '[data-figure="revenue"] .amount' },
        { name: 'accounts', path: '/admin/accounts', ready: 'tr[data-account-id]' },
        {
          name: 'account',
          path: `/admin/accounts/${member.accountId}`,
          ready: `tr[data-key-id="${member.keyId}"]`,
        },
        { name: 'request-log', path: '/admin/requests', ready: 'tr[data-log-request]' },
        { name: 'codes', path: '/admin/codes', ready: 'tr[data-batch-id]' },
        { name: 'models', path: '/admin/models', ready: 'tr[data-model-id="sim-chat"]' },
        { name: 'channels', path: '/admin/channels', ready: 'tr[data-channel-id]' },
        { name: 'share-review', path: '/admin/shares', ready: '[data-share-id] img' },
        { name: 'resolve', path: '/admin/resolve', ready: `form[data-record-id="${unknown}"]` },
        { name: 'payments', path: '/admin/payments', ready: 'main h1' },
        { name: 'usage-cap', path: '/admin/usage-cap', ready: 'tr[data-flagged-id]' },
        {
          name: 'statements',
          path: `/admin/statements?account=${member.accountId}`,
          ready: `select[name="statement-account"] option[value="${member.accountId}"]`,
          act: async (page) => {
            await page.locator('form button[type="submit"]').click();
            await page.locator('tr[data-movement-kind="capture"]').first().waitFor();
          },
        },
        { name: 'audit', path: '/admin/audit', ready: 'tr[data-audit-action]', keyIds: true },
        {
          name: 'ledger',
          path: '/admin/ledger',
          ready: 'main button',
          act: async (page) => {
            await page.locator('main button').click();
            await page.locator('[data-ledger]').waitFor();
          },
        },
        {
          name: 'invite',
          path: '/admin/invite',
          ready: `select[name="invite-account"] option[value="${member.accountId}"]`,
        },
        { name: 'users', path: '/admin/users', ready: 'tr[data-user-email]' },
        { name: 'security', path: '/security', ready: '[data-totp]' },
        { name: '404', path: '/admin/no-such-page', ready: '[data-status-page="404"]' },
        { name: '404-member-page', path: '/keys', ready: '[data-status-page="404"]' },
      ];

      const problems: string[] = [];
      const tour = async (role: 'member' | 'operator', invite: Invitee, stops: readonly Stop[]) => {
        const seen: Watch = { errors: [], inFlight: new Set() };
        const { page, cspViolations, close } = await signedInThroughInvitation(served, {
          language: 'zh-CN',
          invitee: invite,
          label: 'tour',
          watch: (opened) => watch(opened, seen),
        });
        try {
          // Signed in: from here every request must succeed (the invitation page's look-up of a
          // session that did not exist yet was the expected 401).
          await settled(page, seen, 'zh-CN');
          seen.errors.splice(0);
          for (const language of ['zh-CN', 'en'] as const) {
            await page.locator('header .tools select').selectOption(language);
            for (const stop of stops) {
              // As the console's own links move (router.ts): no reload between pages.
              await page.evaluate(`(() => {
                history.pushState(null, '', ${JSON.stringify(`/console${stop.path === '/' ? '' : stop.path}`)});
                dispatchEvent(new PopStateEvent('popstate'));
              })()`);
              await page.locator(stop.ready).first().waitFor({ state: 'attached' });
              await stop.act?.(page);
              problems.push(
                ...(await auditPage(
                  page,
                  seen,
                  language,
                  `${dialect.name}-tour-${role}-${language}-${stop.name}`,
                  stop.keyIds === true,
                )),
              );
            }
          }
          problems.push(...cspViolations.map((violation) => `${role}: CSP: ${violation}`));
        } finally {
          await close();
        }
      };
      await tour('member', { role: 'member', account_id: member.accountId }, memberStops);
      await tour('operator', { role: 'operator' }, operatorStops);
      expect(problems).toEqual([]);
    },
  );
});
