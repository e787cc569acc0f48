import { afterEach, beforeEach, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import { AccountListing } from '../../src/accounts/account-listing.js';
import { shareServiceOf } from '../../src/shares/share-service.js';
import { parseStatementPeriod } from '../../src/usage/statement.js';
import { parseUsageRange } from '../../src/usage/account-usage.js';
import { parseRequestLogQuery } from '../../src/usage/operator-request-log.js';
import { encodeCursor, parseRequestsQuery } from '../../src/usage/request-list-query.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { manualClock, startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';
import { fakeStripeNetwork } from '../payments/stripe-harness.js';

/*
 * The 400s of the services' inputs, which the admin API, the console and the CLI all reach: each
 * input a zod schema parsed at the service's entry (errors/input-schema.ts `parseInput`), the
 * rules a schema cannot say (across fields, against the database or the clock) by hand after it
 * (docs/architecture.md, "Validation at the boundary"). Each row is an input, the field the 400
 * names and its rule (the message is `field: rule`), as the hand checks answered before the
 * schemas: the first field at fault, in the order the service judges them.
 */

type Row = readonly [input: Record<string, unknown>, param: string, rule: string];

async function expectRefused(
  rows: readonly Row[],
  call: (input: Record<string, unknown>) => unknown,
): Promise<void> {
  for (const [input, param, rule] of rows)
    await expect(
      Promise.resolve().then(() => call(input)),
      JSON.stringify(input),
    ).rejects.toMatchObject({ code: 'INVALID_INPUT', param, message: `${param}: ${rule}` });
}

const AMOUNT = 'must be a positive integer of micro-yuan';
const EMAIL = 'must be an email address';
const LIMIT = 'must be an integer from 1 to 100';
const TIME = 'must be an ISO 8601 time or epoch milliseconds';
const DAY = 'must be a UTC day written YYYY-MM-DD (1970-01-01 or later)';
const SHARE_REASON = 'must be 1 to 1000 characters of text, not only blanks, no control characters';
const LIST_TIME =
  'must be an ISO 8601 day (2026-11-01, UTC) or time with its zone (2026-11-01T08:00:00Z)';
const BUDGET_LIMIT = 'must be an integer of micro-yuan from 0 to 1000000000000000';
const ACCOUNT_FILTER = 'must be a string of 1 to 254 characters';
const TEXT_200 = 'must be a string of 1 to 200 characters';
const KIND = 'must be personal or service';
const OVERLAP = 'must be an integer from 0 to 604800 (7 days)';
const COUNT = 'must be an integer from 1 to 1000';
const PASSWORD_TYPE = 'must be a string of 10 to 200 characters';
const PASSWORD_LENGTH = 'must be 10 to 200 characters long';
const STRING = 'must be a string';
const TASK_REASON = 'is required (1-1000 characters)';
const CURSOR = "is not a cursor this server gave; pass a page's next_cursor";
const RECORD_STATUS =
  'must be one of processing, awaiting_funds, submission_unknown, succeeded, failed, resolved, accepted';
const PAST = 'is in the past (2026-11-22T23:00:00.000Z); give a future time or none';
const AT_MOST = 'must be at most 10000000000000 micro-yuan (10 million yuan) per movement';
const CIDR_0 = 'item 0 is not a CIDR block such as 203.0.113.0/24 or 2001:db8::/32';
const CODE = 'must be a redemption code';
const WINDOW = 'must be one of daily, weekly, monthly, total';
const TASK_ACTION = 'must be release or attach';
const RECORD_ACTION = 'must be capture or release';
const TASK_STATUS = 'must be one of queued, submission_unknown, running, succeeded, failed';
const TASK_KIND = 'must be one of image, video, h3';
const SHARE_STATE = 'must be one of pending_review, approved, rejected, revoked';
const ORDER_STATE =
  'must be one of created, paid, expired, failed, amount_mismatch, balance_limit, refunded_partially, refunded';
const ATTACH = 'attach names the task the upstream has';
const FEN = 'must be a whole number of fen (a multiple of 10000 micro-yuan)';
const IDEMPOTENCY = 'must be required or optional';
const MODELS = 'must be an array of model ids';
const NAME = 'must be a string of at most 100 characters';
const CIDRS = 'must be an array of CIDR blocks';
const NO_BLOCK = 'must name at least one block (null allows every address)';
const ALLOWED_IPS_REQUIRED = 'is required (null allows every address)';
const CONTROL = 'must not contain control characters';
const ROLE = 'must be member or operator';
const MEMBER_ACCOUNT = 'a member belongs to one account: give its id';
const LOOKUP =
  'idempotency_key reads one record and takes no list parameter; list without idempotency_key';

/** The gateway's clock: every time below is judged against it. */
const NOW = Date.parse('2026-11-23T00:00:00Z');

describeEachDialect('service inputs keep their 400s on $name', (dialect) => {
  let gateway: TestGateway;
  let accountId: string;
  beforeEach(async () => {
    gateway = await startGateway(dialect, {
      clock: manualClock(NOW),
      config: testConfig({ server: { ...defaultConfig.server, console_self_signup: true } }),
      services: { stripe: fakeStripeNetwork().settings },
    });
    ({ accountId } = await gateway.account(0));
  });
  afterEach(async () => gateway.close());

  it('API keys: a new key, a rotation, an update', async () => {
    const { keys } = gateway.services;
    await expectRefused(
      [
        [{ kind: 'x' }, 'kind', KIND],
        [{ kind: 5 }, 'kind', KIND],
        [{ kind: ['personal'] }, 'kind', KIND],
        [{ idempotency: 'x' }, 'idempotency', IDEMPOTENCY],
        [{ idempotency: true }, 'idempotency', IDEMPOTENCY],
        [{ models: 'sim-chat' }, 'models', MODELS],
        [{ models: [1] }, 'models', MODELS],
        [{ models: ['nope'] }, 'models', 'names "nope", which is not a configured model'],
        [{ models: {} }, 'models', MODELS],
        [{ name: 5 }, 'name', NAME],
        [{ name: 'x'.repeat(101) }, 'name', NAME],
        [{ expires_at: 'x' }, 'expires_at', TIME],
        [{ expires_at: '2026-11-22T23:00:00.000Z' }, 'expires_at', PAST],
        [{ expires_at: 100000000000000000000 }, 'expires_at', TIME],
        [{ expires_at: 1.5 }, 'expires_at', TIME],
        [{ expires_at: true }, 'expires_at', TIME],
        [{ expires_at: 8640000000000001 }, 'expires_at', TIME],
        [
          { expires_at: '2026-02-30' },
          'expires_at',
          'is in the past (2026-03-02T00:00:00.000Z); give a future time or none',
        ],
        [{ allowed_ips: 'x' }, 'allowed_ips', CIDRS],
        [{ allowed_ips: [] }, 'allowed_ips', NO_BLOCK],
        [{ allowed_ips: ['bad'] }, 'allowed_ips', CIDR_0],
        [{ allowed_ips: [5] }, 'allowed_ips', CIDR_0],
        [
          { allowed_ips: ['10.0.0.0/8', 'x'.repeat(65)] },
          'allowed_ips',
          'item 1 is not a CIDR block such as 203.0.113.0/24 or 2001:db8::/32',
        ],
        [
          { allowed_ips: Array.from({ length: 101 }, (_, i) => `10.0.0.${i}`) },
          'allowed_ips',
          'must have at most 100 blocks',
        ],
        [{ kind: 'x', idempotency: 'y' }, 'kind', KIND],
        [{ idempotency: 'y', models: 'x' }, 'idempotency', IDEMPOTENCY],
        [{ name: 5, expires_at: 'x' }, 'name', NAME],
        [{ kind: 'x', allowed_ips: 'x' }, 'kind', KIND],
      ],
      (input) => keys.create(accountId, input),
    );
    // The input is judged before the account is looked up.
    await expectRefused([[{ kind: 'x' }, 'kind', KIND]], (input) =>
      keys.create('acct_nope', input),
    );
    await expectRefused(
      [
        [{ expire_old_in_seconds: null }, 'expire_old_in_seconds', OVERLAP],
        [{ expire_old_in_seconds: -1 }, 'expire_old_in_seconds', OVERLAP],
        [{ expire_old_in_seconds: 1.5 }, 'expire_old_in_seconds', OVERLAP],
        [{ expire_old_in_seconds: '5' }, 'expire_old_in_seconds', OVERLAP],
        [{ expire_old_in_seconds: 604801 }, 'expire_old_in_seconds', OVERLAP],
        [{ expire_old_in_seconds: 9007199254740992 }, 'expire_old_in_seconds', OVERLAP],
      ],
      (input) => keys.rotate('key_nope', input),
    );
    await expectRefused(
      [
        [{}, 'allowed_ips', ALLOWED_IPS_REQUIRED],
        [{ allowed_ips: undefined }, 'allowed_ips', ALLOWED_IPS_REQUIRED],
        [{ allowed_ips: 'x' }, 'allowed_ips', CIDRS],
        [{ allowed_ips: [] }, 'allowed_ips', NO_BLOCK],
      ],
      (input) => keys.update('key_nope', input),
    );
  });

  it('accounts: a new account, a top-up, redemption codes, a redemption', async () => {
    const { accounts } = gateway.services;
    await expectRefused(
      [
        [{}, 'email', EMAIL],
        [{ email: 5 }, 'email', EMAIL],
        [{ email: 'bad' }, 'email', EMAIL],
        [{ email: 'a\u0001b@example.test' }, 'email', CONTROL],
        [{ email: 'a\u0085b@example.test' }, 'email', CONTROL],
        [{ email: `x@${'x'.repeat(256)}` }, 'email', EMAIL],
        [{ email: null }, 'email', EMAIL],
      ],
      (input) => accounts.create(input),
    );
    await expectRefused(
      [
        [{}, 'amount', AMOUNT],
        [{ amount: 5 }, 'reference', TEXT_200],
        [{ amount: 0, reference: 'r' }, 'amount', AMOUNT],
        [{ amount: -1, reference: 'r' }, 'amount', AMOUNT],
        [{ amount: 1.5, reference: 'r' }, 'amount', AMOUNT],
        [{ amount: '5', reference: 'r' }, 'amount', AMOUNT],
        [{ amount: 9007199254740994, reference: 'r' }, 'amount', AMOUNT],
        [{ amount: 100000000000000000000, reference: 'r' }, 'amount', AMOUNT],
        [{ amount: 10000000000001, reference: 'r' }, 'amount', AT_MOST],
        [{ amount: Infinity, reference: 'r' }, 'amount', AMOUNT],
        [{ amount: null, reference: 'r' }, 'amount', AMOUNT],
        [{ amount: 5, reference: '' }, 'reference', TEXT_200],
        [{ amount: 5, reference: 5 }, 'reference', TEXT_200],
        [{ amount: 5, reference: 'x'.repeat(201) }, 'reference', TEXT_200],
        [{ amount: 0, reference: 5 }, 'amount', AMOUNT],
        [{ reference: 'r' }, 'amount', AMOUNT],
      ],
      (input) => accounts.topUp(accountId, input),
    );
    await expectRefused(
      [
        [{}, 'amount', AMOUNT],
        [{ amount: 5 }, 'count', COUNT],
        [{ amount: 5, count: 0 }, 'count', COUNT],
        [{ amount: 5, count: 1001 }, 'count', COUNT],
        [{ amount: 5, count: 1.5 }, 'count', COUNT],
        [{ amount: 5, count: '3' }, 'count', COUNT],
        [{ amount: 5, count: null }, 'count', COUNT],
        [{ amount: 5, count: 2, expires_at: 'x' }, 'expires_at', TIME],
        [{ amount: 5, count: 2, expires_at: '2026-11-22T23:00:00.000Z' }, 'expires_at', PAST],
        [{ amount: 0, count: 0 }, 'amount', AMOUNT],
        [{ amount: 5, count: 0, expires_at: 'x' }, 'expires_at', TIME],
        [{ count: 2, expires_at: 'x' }, 'amount', AMOUNT],
      ],
      (input) => accounts.createRedemptionBatch(input),
    );
    await expectRefused(
      [
        [{}, 'amount', AMOUNT],
        [{ amount: 5, expires_at: '2026-11-22T23:00:00.000Z' }, 'expires_at', PAST],
        [{ amount: 5, expires_at: 'x' }, 'expires_at', TIME],
        [{ amount: 'x', expires_at: 'x' }, 'amount', AMOUNT],
      ],
      (input) => accounts.createRedemptionCode(input),
    );
    await expectRefused(
      [
        [{}, 'code', CODE],
        [{ code: 5 }, 'code', CODE],
        [{ code: 'x'.repeat(101) }, 'code', CODE],
        [{ code: null }, 'code', CODE],
      ],
      (input) => accounts.redeem(accountId, input),
    );
  });

  it('console users: an invitation, its acceptance, the list, a sign-in, a password change, a sign-up', async () => {
    const { consoleUsers, consoleSessions, consoleSignUp } = gateway.services;
    const origin = { address: '203.0.113.9', userAgent: 'test' };
    await expectRefused(
      [
        [{}, 'email', EMAIL],
        [{ email: 5, role: 'member' }, 'email', EMAIL],
        [{ email: 'bad', role: 'member' }, 'email', EMAIL],
        [{ email: 'a\u0001@example.test', role: 'operator' }, 'email', EMAIL],
        [{ email: 'x@example.test' }, 'role', ROLE],
        [{ email: 'x@example.test', role: 'x' }, 'role', ROLE],
        [{ email: 'y@example.test', role: 'member' }, 'account', MEMBER_ACCOUNT],
        [
          { email: 'y@example.test', role: 'operator', account_id: accountId },
          'account',
          'an operator belongs to no account',
        ],
        [
          { email: 'y@example.test', role: 'member', account_id: 'acct_nope' },
          'account',
          'no account acct_nope',
        ],
        [{ email: 'y@example.test', role: 'member', account_id: 5 }, 'account', MEMBER_ACCOUNT],
        [{ email: 5, role: 'x' }, 'email', EMAIL],
        [{ role: 'x' }, 'email', EMAIL],
      ],
      (input) => consoleUsers.invite(input),
    );
    await expectRefused(
      [
        [{}, 'password', PASSWORD_TYPE],
        [{ password: 5 }, 'password', PASSWORD_TYPE],
        [{ password: 'short' }, 'password', PASSWORD_LENGTH],
        [{ password: 'x'.repeat(201) }, 'password', PASSWORD_LENGTH],
        [{ password: '😀'.repeat(201) }, 'password', PASSWORD_LENGTH],
        [{ password: null }, 'password', PASSWORD_TYPE],
      ],
      (input) => consoleUsers.acceptInvitation('no-such-token', input),
    );
    await expectRefused(
      [
        [{ email: 5 }, 'email', EMAIL],
        [{ email: 'bad' }, 'email', EMAIL],
        [{ limit: '0' }, 'limit', LIMIT],
        [{ email: 'bad', limit: '0' }, 'limit', LIMIT],
        [{ after: 'x' }, 'after', 'is not a console user id'],
      ],
      (input) => consoleUsers.list(input),
    );
    const invitation = await consoleUsers.invite({
      email: 'pw@example.test',
      role: 'member',
      account_id: accountId,
    });
    const token = invitation.invite_url.split('/').at(-1) ?? '';
    await consoleUsers.acceptInvitation(token, { password: 'correct horse battery' });
    await expectRefused(
      [
        [{}, 'email', EMAIL],
        [{ email: 5, password: 'x' }, 'email', EMAIL],
        [{ email: 'ab', password: 'x' }, 'email', EMAIL],
        [{ email: 'x'.repeat(321), password: 'x' }, 'email', EMAIL],
        [{ email: 'pw@example.test' }, 'password', STRING],
        [{ email: 'pw@example.test', password: 5 }, 'password', STRING],
        [{ email: 'pw@example.test', password: 'x'.repeat(1001) }, 'password', STRING],
        [{ email: 5, password: 5 }, 'email', EMAIL],
      ],
      (input) => consoleSessions.signIn(input, origin),
    );
    const { identity } = await consoleSessions.signIn(
      { email: 'pw@example.test', password: 'correct horse battery' },
      origin,
    );
    await expectRefused(
      [
        [{}, 'current_password', STRING],
        [{ current_password: 5 }, 'current_password', STRING],
        [{ current_password: 'x' }, 'new_password', PASSWORD_TYPE],
        [{ current_password: 'x', new_password: 'short' }, 'new_password', PASSWORD_LENGTH],
        [{ current_password: 'x', new_password: 5 }, 'new_password', PASSWORD_TYPE],
        [{ new_password: 'short' }, 'current_password', STRING],
      ],
      (input) => consoleSessions.changePassword(identity, input, origin.address),
    );
    await expectRefused(
      [
        [{}, 'email', EMAIL],
        [{ email: 'bad', password: 'x' }, 'email', EMAIL],
        [{ email: 'new@example.test' }, 'password', PASSWORD_TYPE],
        [{ email: 'new@example.test', password: 'short' }, 'password', PASSWORD_LENGTH],
      ],
      (input) => consoleSignUp.signUp(input, origin),
    );
  });

  it('payments: an online top-up, the order lists', async () => {
    const { payments } = gateway.services;
    const urls = () => ({ successUrl: 'https://x.test/s', cancelUrl: 'https://x.test/c' });
    await expectRefused(
      [
        [{}, 'amount', AMOUNT],
        [{ amount: 5 }, 'amount', FEN],
        [{ amount: 10001 }, 'amount', FEN],
        [{ amount: 0 }, 'amount', AMOUNT],
        [{ amount: 10000000000001 }, 'amount', AT_MOST],
        [{ amount: 10000000010000 }, 'amount', AT_MOST],
        [{ amount: '10000' }, 'amount', AMOUNT],
      ],
      (input) => payments.startTopUp(accountId, input, urls),
    );
    await expectRefused(
      [
        [{ state: 'x' }, 'state', ORDER_STATE],
        [{ flagged: 'yes' }, 'flagged', 'must be true or absent'],
        [{ flagged: false }, 'flagged', 'must be true or absent'],
        [{ limit: '0' }, 'limit', LIMIT],
        [{ state: 'x', limit: '0' }, 'limit', LIMIT],
        [{ state: 5 }, 'state', ORDER_STATE],
      ],
      (input) => payments.listAll(input),
    );
  });

  it('shares: the review queue, the decisions', async () => {
    const shares = shareServiceOf({ ...gateway.services, shareLinkSecret: Buffer.alloc(32) });
    await expectRefused(
      [
        [{ state: 'x' }, 'state', SHARE_STATE],
        [{ state: 5 }, 'state', SHARE_STATE],
        [{ state: 'x', limit: '0' }, 'state', SHARE_STATE],
        [{ after: 'x' }, 'after', 'is not the id of a share in this list'],
      ],
      (input) => shares.listForReview(input),
    );
    await expectRefused(
      [
        [{ reason: 5 }, 'reason', SHARE_REASON],
        [{ reason: '  ' }, 'reason', SHARE_REASON],
        [{ reason: 'x'.repeat(1001) }, 'reason', SHARE_REASON],
        [{ reason: 'a\u0007b' }, 'reason', SHARE_REASON],
      ],
      (input) => shares.approve('shr_nope', input),
    );
    await expectRefused([[{ reason: '' }, 'reason', SHARE_REASON]], (input) =>
      shares.reject('shr_nope', input),
    );
    await expectRefused(
      [
        [{ reason: 5 }, 'reason', SHARE_REASON],
        [{ reason: 'a\u0085' }, 'reason', SHARE_REASON],
      ],
      (input) => shares.revoke('shr_nope', input),
    );
    // Whether a reason is required goes with the decision: its 400 says why in its own words.
    for (const input of [{}, { reason: null }])
      for (const decide of [
        () => shares.reject('shr_nope', input),
        () => shares.revoke('shr_nope', input),
      ])
        await expect(Promise.resolve().then(decide)).rejects.toMatchObject({
          code: 'INVALID_INPUT',
          param: 'reason',
          message: 'reason is required: say why (it is journalled and shown to the share owner)',
        });
  });

  it("tasks: the operators' list, a resolution", async () => {
    const { taskOperations } = gateway.services;
    await expectRefused(
      [
        [{ status: 'x' }, 'status', TASK_STATUS],
        [{ status: 5 }, 'status', TASK_STATUS],
        [{ kind: 'x' }, 'kind', TASK_KIND],
        [{ kind: 5 }, 'kind', TASK_KIND],
        [{ accountId: 5 }, 'account_id', 'must be an id'],
        [{ status: 'x', kind: 'x' }, 'status', TASK_STATUS],
        [{ kind: 'x', accountId: 5 }, 'kind', TASK_KIND],
      ],
      (input) => taskOperations.list(input),
    );
    await expectRefused(
      [
        [{}, 'action', TASK_ACTION],
        [{ action: 'x', reason: 'r' }, 'action', TASK_ACTION],
        [{ action: 'release' }, 'reason', TASK_REASON],
        [{ action: 'release', reason: '' }, 'reason', TASK_REASON],
        [{ action: 'release', reason: '   ' }, 'reason', TASK_REASON],
        [{ action: 'release', reason: 'x'.repeat(1001) }, 'reason', TASK_REASON],
        [{ action: 'release', reason: 5 }, 'reason', TASK_REASON],
        [{ action: 'attach', reason: 'r' }, 'upstream_task_id', ATTACH],
        [{ action: 'attach', reason: 'r', upstream_task_id: '' }, 'upstream_task_id', ATTACH],
        [{ action: 'attach', reason: 'r', upstream_task_id: 5 }, 'upstream_task_id', ATTACH],
        [
          { action: 'release', reason: 'r', upstream_task_id: 'u' },
          'upstream_task_id',
          'a release names no upstream task',
        ],
        [{ action: 'x' }, 'action', TASK_ACTION],
        [{ reason: 'r' }, 'action', TASK_ACTION],
      ],
      (input) => taskOperations.resolve('task_nope', input),
    );
  });

  it('request listings and day ranges', async () => {
    await expectRefused(
      [
        [{ idempotency_key: 'k', limit: 'x' }, 'limit', LOOKUP],
        [{ idempotency_key: 'k', status: 'x', limit: '5' }, 'status', LOOKUP],
        [{ limit: '0' }, 'limit', LIMIT],
        [{ limit: '101' }, 'limit', LIMIT],
        [{ limit: '1.5' }, 'limit', LIMIT],
        [{ limit: '' }, 'limit', LIMIT],
        [{ status: 'x' }, 'status', RECORD_STATUS],
        [{ status: 'completed' }, 'status', RECORD_STATUS],
        [{ cursor: 'x' }, 'cursor', CURSOR],
        [{ created_after: '2026-02-30' }, 'created_after', LIST_TIME],
        [{ created_after: '2026-11-01T08:00' }, 'created_after', LIST_TIME],
        [{ created_before: 'x' }, 'created_before', LIST_TIME],
        [
          { created_after: '2026-11-02', created_before: '2026-11-01' },
          'created_before',
          'must be later than created_after',
        ],
        [
          { created_after: '2026-11-01', created_before: '2026-11-01' },
          'created_before',
          'must be later than created_after',
        ],
        [{ status: 'x', cursor: 'x' }, 'cursor', CURSOR],
        [{ cursor: 'x', limit: '0' }, 'limit', LIMIT],
        [{ created_before: 'x', created_after: 'y' }, 'created_after', LIST_TIME],
      ],
      (input) => parseRequestsQuery(input),
    );
    const cursor = encodeCursor({ createdAt: NOW, id: 'req_abc' });
    await expectRefused(
      [
        [{ from: 'x' }, 'from', LIST_TIME],
        [{ to: 'x' }, 'to', LIST_TIME],
        [{ from: '2026-11-02', to: '2026-11-01' }, 'to', 'must be later than from'],
        [
          { from: '2020-01-01', to: '2026-01-01' },
          'from',
          'the period is longer than 366 days; ask for at most 366 at once',
        ],
        [{ limit: '0' }, 'limit', LIMIT],
        [{ status: 'x' }, 'status', RECORD_STATUS],
        [{ cursor: 'x' }, 'cursor', CURSOR],
        [{ limit: '0', from: 'x' }, 'from', LIST_TIME],
        [
          {
            account_id: 'a',
            key_id: 'k',
            model: 'm',
            from: '2026-11-01',
            to: '2026-11-02',
            status: 'completed',
            limit: '5',
            cursor,
          },
          'status',
          RECORD_STATUS,
        ],
      ],
      (input) => parseRequestLogQuery(input, Date.UTC(2026, 10, 15)),
    );
    await expectRefused(
      [
        [{ from: 'x' }, 'from', DAY],
        [{ to: 'x' }, 'to', DAY],
        [{ from: 'x', to: 'y' }, 'to', DAY],
        [{ from: '2026-11-02', to: '2026-11-01' }, 'from', 'must not be after to (2026-11-01)'],
        [
          { from: '2020-01-01', to: '2026-01-01' },
          'from',
          'the range is 2193 days; at most 366 days may be asked at once',
        ],
        [{ from: '1969-12-31' }, 'from', DAY],
        [{ from: '2026-02-30' }, 'from', DAY],
      ],
      (input) => parseUsageRange(input, Date.UTC(2026, 10, 15)),
    );
    await expectRefused(
      [
        [{ from: 'x' }, 'from', DAY],
        [{ to: 'x' }, 'to', DAY],
        [{ from: 'x', to: 'y' }, 'to', DAY],
        [{ from: '2026-11-02', to: '2026-11-01' }, 'from', 'must not be after to (2026-11-01)'],
      ],
      (input) => parseStatementPeriod(input, Date.UTC(2026, 10, 15)),
    );
  });

  it("budgets, a record's resolution, the account list, the audit log", async () => {
    const { budgets, settlements, audit, store } = gateway.services;
    await expectRefused(
      [
        [{}, 'limit', BUDGET_LIMIT],
        [{ limit: 5 }, 'window', WINDOW],
        [{ limit: -1, window: 'daily' }, 'limit', BUDGET_LIMIT],
        [{ limit: 1.5, window: 'daily' }, 'limit', BUDGET_LIMIT],
        [{ limit: '5', window: 'daily' }, 'limit', BUDGET_LIMIT],
        [{ limit: 100000000000000000000, window: 'daily' }, 'limit', BUDGET_LIMIT],
        [{ limit: 5, window: 'x' }, 'window', WINDOW],
        [{ limit: 5, window: 5 }, 'window', WINDOW],
        [{ window: 'x' }, 'limit', BUDGET_LIMIT],
        [{ limit: null, window: null }, 'limit', BUDGET_LIMIT],
      ],
      (input) => budgets.setForKey('key_nope', input),
    );
    await expectRefused(
      [
        [{}, 'action', RECORD_ACTION],
        [{ action: 'x', reason: 'r' }, 'action', RECORD_ACTION],
        [{ action: 'release' }, 'reason', 'is required'],
        [{ action: 'release', reason: '' }, 'reason', 'is required'],
        [{ action: 'release', reason: '  ' }, 'reason', 'is required'],
        [{ action: 'release', reason: 5 }, 'reason', 'is required'],
        [
          { action: 'release', reason: 'r', amount: 5 },
          'amount',
          'a release frees the whole hold and takes no amount',
        ],
        [
          { action: 'capture', reason: 'r', amount: 0 },
          'amount',
          'must be positive: to charge nothing, release the hold',
        ],
        [{ action: 'capture', reason: 'r' }, 'amount', AMOUNT],
        [{ action: 'capture', reason: 'r', amount: 1.5 }, 'amount', AMOUNT],
        [{ reason: 'r' }, 'action', RECORD_ACTION],
        [{ action: 'x' }, 'action', RECORD_ACTION],
      ],
      (input) => settlements.resolve('req_nope', input),
    );
    const listing = new AccountListing(store.db, { clock: manualClock(NOW) });
    await expectRefused(
      [
        [{ q: 5 }, 'q', ACCOUNT_FILTER],
        [{ q: '' }, 'q', ACCOUNT_FILTER],
        [{ q: 'x'.repeat(255) }, 'q', ACCOUNT_FILTER],
        [{ id_prefix: 5 }, 'id_prefix', ACCOUNT_FILTER],
        [{ q: 5, id_prefix: 5 }, 'q', ACCOUNT_FILTER],
        [{ q: 5, limit: '0' }, 'q', ACCOUNT_FILTER],
        [{ limit: '0' }, 'limit', LIMIT],
        [{ after: 'x' }, 'after', 'is not an account id'],
        [{ id_prefix: '', after: 'x' }, 'id_prefix', ACCOUNT_FILTER],
      ],
      (input) => listing.list(input),
    );
    await expectRefused(
      [
        [{ account_id: 5 }, 'account_id', TEXT_200],
        [{ account_id: '' }, 'account_id', TEXT_200],
        [{ action: 5 }, 'action', TEXT_200],
        [{ action: 'x'.repeat(255) }, 'action', TEXT_200],
        [{ account_id: 5, action: 5 }, 'account_id', TEXT_200],
        [{ limit: '0' }, 'limit', LIMIT],
        [{ action: 5, limit: '0' }, 'action', TEXT_200],
        [{ after: 5 }, 'after', TEXT_200],
        [{ after: 'x' }, 'after', 'is not an audit event id'],
        [{ after: '' }, 'after', TEXT_200],
      ],
      (input) => audit.list(input),
    );
  });
});
