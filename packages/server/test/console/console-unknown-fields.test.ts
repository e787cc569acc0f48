import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_OPERATIONS } from '../../src/http/console/console-operations.js';
import { consoleCall, consoleUser, type ConsoleSession } from '../helpers/console-session.js';
import { dialects } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

const [sqlite] = dialects;
const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const UNKNOWN = 'tollgate_unknown_field';

/**
 * The known fields sent beside the unknown one where a route's own schema would otherwise
 * refuse a missing field first (the exact settle body of spec 4.3).
 */
const KNOWN_FIELDS: Readonly<Record<string, Record<string, unknown>>> = {
  'POST /console/api/tasks/{id}/settle': {
    actual_amount: 1,
    price_version: 'pv_1',
    confirmation: 'settle_original_approved',
  },
};

/** Every console write operation whose body is JSON (an upload's body is the file itself). */
const writeRoutes = Object.entries(CONSOLE_OPERATIONS)
  .map(([name, operation]) => {
    const [method = '', path = ''] = name.split(' ');
    return { name, method, path, operation };
  })
  .filter(({ method, operation }) => WRITES.has(method) && operation.unknownFields !== 'file');

/**
 * The console refuses body fields a call does not take, as `/v1` and `/admin/v1` do: 400
 * `INVALID_INPUT` naming `body.<field>`, nothing done (issue 35: a key asked for with
 * `allowed_ips` was created unrestricted, a top-up's `currency` was dropped).
 */
describe('console write routes refuse unknown body fields', () => {
  let gateway: TestGateway;
  let member: ConsoleSession;
  let operator: ConsoleSession;
  let accountId: string;
  beforeAll(async () => {
    if (sqlite === undefined) throw new Error('no SQLite dialect');
    gateway = await startGateway(sqlite);
    ({ accountId } = await gateway.account(1_000_000));
    member = await consoleUser(gateway, 'member@example.test', 'member', accountId);
    operator = await consoleUser(gateway, 'ops@example.test', 'operator');
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  it('covers every console write route of the table', () => {
    expect(writeRoutes.length).toBeGreaterThan(30);
  });

  it.each(writeRoutes)('$name: an unknown field is 400 naming it', async (route) => {
    const { name, method, path, operation } = route;
    // A configured model (its prices exist); any other path parameter names nothing.
    const url = path.replace('{model}', 'sim-embed').replace(/\{[^}]+\}/g, 'x_unknown_id');
    const session = operation.access === 'operator' ? operator : member;
    const answer = await gateway.app.inject({
      method: method as 'POST',
      url,
      payload: { ...KNOWN_FIELDS[name], [UNKNOWN]: 1 },
      headers: {
        'idempotency-key': randomUUID(),
        ...(operation.access === 'public'
          ? {}
          : { cookie: session.cookie, 'x-csrf-token': session.csrf }),
      },
    });
    expect(answer.statusCode, answer.body).toBe(400);
    const { error } = answer.json<{ error: { code: string; param: string; message: string } }>();
    expect(error.code).toBe('INVALID_INPUT');
    // The price book names the field itself (docs/admin.md, "Input rules").
    if (operation.unknownFields === 'service') expect(error.param).toContain(UNKNOWN);
    else {
      expect(error.param).toBe(`body.${UNKNOWN}`);
      expect(error.message).toBe(`body.${UNKNOWN} is not a known field`);
    }
    // The session that sent it is still open (a sign-out with a bad body signed nobody out).
    expect((await consoleCall(gateway, member, 'GET', '/console/api/session')).statusCode).toBe(
      200,
    );
  });

  it('a key asked for with allowed_ips, account_id or budget is refused naming the field, and no key is made', async () => {
    const before = (await gateway.services.keys.list(accountId)).length;
    for (const [field, value] of [
      ['allowed_ips', ['203.0.113.0/24']],
      ['account_id', 'acct_other'],
      ['budget', { limit: 10, window: 'daily' }],
    ] as const) {
      const refused = await consoleCall(gateway, member, 'POST', '/console/api/keys', {
        body: { name: 'restricted', [field]: value },
      });
      expect(refused.statusCode, field).toBe(400);
      expect(refused.json()).toMatchObject({ error: { param: `body.${field}` } });
    }
    expect(await gateway.services.keys.list(accountId)).toHaveLength(before);
    // The same key without them is made.
    const made = await consoleCall(gateway, member, 'POST', '/console/api/keys', {
      body: { name: 'plain' },
    });
    expect(made.statusCode, made.body).toBe(200);
  });

  it('a top-up with a currency is refused naming it, and no order is opened', async () => {
    const refused = await consoleCall(gateway, member, 'POST', '/console/api/topups', {
      body: { amount: 10_000_000, currency: 'USD' },
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ error: { param: 'body.currency' } });
    const orders = await gateway.services.store.db
      .selectFrom('payment_orders')
      .select('id')
      .execute();
    expect(orders).toHaveLength(0);
  });

  it('the role is still checked first: a member sending an unknown field to an operator route is 403', async () => {
    const refused = await consoleCall(gateway, member, 'POST', '/console/api/admin/accounts', {
      body: { email: 'x@example.test', [UNKNOWN]: 1 },
    });
    expect(refused.statusCode).toBe(403);
    const operatorOnMember = await consoleCall(gateway, operator, 'POST', '/console/api/keys', {
      body: { name: 'k', [UNKNOWN]: 1 },
    });
    expect(operatorOnMember.statusCode).toBe(403);
  });
});
