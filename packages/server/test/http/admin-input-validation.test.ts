import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { finishedRequest, unknownOutcome } from '../helpers/records.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { ADMIN_TOKEN, manualClock, startGateway, type TestGateway } from '../helpers/gateway.js';
import { cliIn } from '../helpers/processes.js';

/**
 * Operator input the admin API used to take and act on: unknown fields silently ignored, a free
 * model by accident, keys born expired or allowed models that do not exist, control characters
 * in emails, codes expired at birth, resolutions that say the opposite of their action. Each is
 * now a 400 `INVALID_INPUT` naming the field, and nothing changes. The rules live in the
 * services, so the CLI refuses the same inputs (last test).
 */
describeEachDialect('admin input validation on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  async function send(
    method: 'POST' | 'PUT',
    url: string,
    payload: object,
  ): Promise<LightMyRequestResponse> {
    if (gateway === undefined) throw new Error('no gateway');
    return gateway.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload,
    });
  }
  /** 400 INVALID_INPUT in the spec's shape, about `param`, with `named` in the message. */
  function expectRefused(response: LightMyRequestResponse, param: string, named = param): void {
    expect(response.statusCode, response.body).toBe(400);
    const body = response.json<{ error: Record<string, unknown> }>();
    expect(body).toEqual({
      error: {
        code: 'INVALID_INPUT',
        message: expect.stringContaining(named),
        request_id: expect.stringMatching(/^req_/),
        param,
      },
    });
  }
  const count = async (table: 'accounts' | 'api_keys' | 'redemption_codes' | 'model_prices') =>
    Number(
      (
        await gateway?.services.store.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number | string>().as('count'))
          .executeTakeFirstOrThrow()
      )?.count,
    );

  it('refuses unknown body fields on every admin route, naming the field, and changes nothing', async () => {
    gateway = await startGateway(dialect);
    const { accountId, keyId } = await gateway.account(1_000);
    const before = {
      accounts: await count('accounts'),
      keys: await count('api_keys'),
      codes: await count('redemption_codes'),
      prices: await count('model_prices'),
    };
    const cases: [method: 'POST' | 'PUT', url: string, body: object, field: string][] = [
      ['POST', '/admin/v1/accounts', { email: 'new@example.test', role: 'admin' }, 'role'],
      [
        'POST',
        `/admin/v1/accounts/${accountId}/topups`,
        { amount: 5, reference: 'typo', ammount: 5 },
        'ammount',
      ],
      ['POST', `/admin/v1/accounts/${accountId}/redemptions`, { code: 'TGR-x', to: 'me' }, 'to'],
      ['POST', `/admin/v1/accounts/${accountId}/keys`, { model: ['sim-embed'] }, 'model'],
      ['POST', `/admin/v1/keys/${keyId}/rotate`, { expire_old_in: 60 }, 'expire_old_in'],
      ['POST', '/admin/v1/redemption-codes', { amount: 5, expiry: '2100-01-01' }, 'expiry'],
      [
        'POST',
        `/admin/v1/requests/req_x/resolve`,
        { action: 'release', reason: 'r', note: 'x' },
        'note',
      ],
      [
        'PUT',
        '/admin/v1/models/sim-embed/prices',
        { input_per_million_tokens: 5, discount: 1 },
        'discount',
      ],
    ];
    for (const [method, url, body, field] of cases) {
      const response = await send(method, url, body);
      const param = method === 'PUT' ? field : `body.${field}`;
      expectRefused(response, param, field);
    }
    expect({
      accounts: await count('accounts'),
      keys: await count('api_keys'),
      codes: await count('redemption_codes'),
      prices: await count('model_prices'),
    }).toEqual(before);
    expect(await gateway.balance(accountId)).toEqual({ balance: 1_000, held: 0, available: 1_000 });
  });

  it('refuses a price of 0 unless the body says "free": true', async () => {
    gateway = await startGateway(dialect);
    const url = '/admin/v1/models/sim-chat/prices';
    const versions = async () =>
      (await gateway?.admin('GET', url))?.['data'] as { price_version: string }[];
    const before = await versions();
    expectRefused(
      await send('PUT', url, { input_per_million_tokens: 0, output_per_million_tokens: 9 }),
      'input_per_million_tokens',
    );
    expectRefused(
      await send('PUT', url, {
        input_per_million_tokens: 0,
        output_per_million_tokens: 0,
        free: false,
      }),
      'input_per_million_tokens',
    );
    expectRefused(await send('PUT', url, { input_per_million_tokens: 5, free: true }), 'free');
    expectRefused(await send('PUT', url, { input_per_million_tokens: 0, free: 'yes' }), 'free');
    expect(await versions()).toEqual(before);
    const free = await send('PUT', url, {
      input_per_million_tokens: 0,
      output_per_million_tokens: 0,
      free: true,
    });
    expect(free.statusCode, free.body).toBe(200);
    expect(free.json()).toMatchObject({
      prices: { input_per_million_tokens: 0, output_per_million_tokens: 0 },
    });
    expect(free.json<{ prices: object }>().prices).not.toHaveProperty('free');
  });

  it('refuses an output price on an embeddings model', async () => {
    gateway = await startGateway(dialect);
    const url = '/admin/v1/models/sim-embed/prices';
    const before = await gateway.admin('GET', url);
    expectRefused(
      await send('PUT', url, { input_per_million_tokens: 5, output_per_million_tokens: 5 }),
      'output_per_million_tokens',
    );
    expectRefused(
      await send('PUT', '/admin/v1/models/sim-rerank/prices', {
        input_per_million_tokens: 5,
        reasoning_per_million_tokens: 5,
      }),
      'reasoning_per_million_tokens',
    );
    expect(await gateway.admin('GET', url)).toEqual(before);
  });

  it('refuses a key whose expiry is in the past', async () => {
    const clock = manualClock();
    gateway = await startGateway(dialect, { clock });
    const { accountId } = await gateway.account(0);
    const before = await count('api_keys');
    const url = `/admin/v1/accounts/${accountId}/keys`;
    expectRefused(
      await send('POST', url, { expires_at: new Date(clock.now() - 1).toISOString() }),
      'expires_at',
    );
    expectRefused(await send('POST', url, { expires_at: clock.now() }), 'expires_at');
    // Past what a Date can show (±8.64e15 ms), a time could never be answered as ISO 8601.
    expectRefused(await send('POST', url, { expires_at: Number.MAX_SAFE_INTEGER }), 'expires_at');
    expect(await count('api_keys')).toBe(before);
    const future = await send('POST', url, { expires_at: clock.now() + 1 });
    expect(future.statusCode).toBe(201);
  });

  it('refuses an allowlist naming a model that does not exist, naming it', async () => {
    gateway = await startGateway(dialect);
    const { accountId } = await gateway.account(0);
    const before = await count('api_keys');
    expectRefused(
      await send('POST', `/admin/v1/accounts/${accountId}/keys`, {
        models: ['sim-embed', 'gpt-imaginary'],
      }),
      'models',
      'gpt-imaginary',
    );
    expect(await count('api_keys')).toBe(before);
  });

  it('refuses an email holding a NUL byte or another control character', async () => {
    gateway = await startGateway(dialect);
    const before = await count('accounts');
    for (const email of ['owner\u0000@example.test', 'owner@exa\u007fmple.test', 'a\u0085b@c.d']) {
      expectRefused(await send('POST', '/admin/v1/accounts', { email }), 'email');
    }
    expect(await count('accounts')).toBe(before);
  });

  it('refuses a redemption code that has already expired when it is created', async () => {
    const clock = manualClock();
    gateway = await startGateway(dialect, { clock });
    expectRefused(
      await send('POST', '/admin/v1/redemption-codes', {
        amount: 1_000,
        expires_at: new Date(clock.now() - 60_000).toISOString(),
      }),
      'expires_at',
    );
    expect(await count('redemption_codes')).toBe(0);
  });

  it('refuses an operator capture of 0 and a release with an amount; the hold stays open', async () => {
    gateway = await startGateway(dialect);
    const { accountId, key } = await gateway.account(1_000);
    const requestId = await unknownOutcomeOf(gateway, key, 400);
    const url = `/admin/v1/requests/${requestId}/resolve`;
    expectRefused(await send('POST', url, { action: 'capture', amount: 0, reason: 'x' }), 'amount');
    expectRefused(
      await send('POST', url, { action: 'release', amount: 400, reason: 'x' }),
      'amount',
    );
    expect(await gateway.balance(accountId)).toEqual({ balance: 1_000, held: 400, available: 600 });
    const record = await gateway.admin('GET', `/admin/v1/requests/${requestId}`);
    expect(record['status']).toBe('submission_unknown');
    const released = await send('POST', url, { action: 'release', reason: 'never ran' });
    expect(released.statusCode).toBe(200);
    expect(await gateway.balance(accountId)).toEqual({ balance: 1_000, held: 0, available: 1_000 });
  });
});

/** A request with a hold whose outcome was never confirmed (`submission_unknown`). */
function unknownOutcomeOf(gateway: TestGateway, key: string, hold: number): Promise<string> {
  return finishedRequest(gateway.services, { key, hold, outcome: unknownOutcome });
}

/** The CLI calls the same services: the same inputs are refused there (SQLite data dir). */
describe('admin input validation in the CLI', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'tollgate-cli-validation-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
  const cli = (...args: string[]) => cliIn(dataDir, ...args);

  it('refuses the same inputs as the admin API, naming the field', async () => {
    const account = await cli('accounts', 'create', '--email', 'cli-rules@example.test');
    const accountId = String(account.json['id']);
    const refusals: [args: string[], field: string][] = [
      [['accounts', 'create', '--email', 'nul\u0000@example.test'], 'email'],
      [['keys', 'create', accountId, '--expires-at', '2001-01-01T00:00:00Z'], 'expires_at'],
      [['keys', 'create', accountId, '--models', 'sim-embed,gpt-imaginary'], 'gpt-imaginary'],
      [['codes', 'create', '--amount', '5', '--expires-at', '2001-01-01T00:00:00Z'], 'expires_at'],
      [['prices', 'set', 'sim-embed', '--json', '{"input_per_million_tokens": 0}'], 'input_per'],
      [
        [
          'prices',
          'set',
          'sim-embed',
          '--json',
          '{"input_per_million_tokens": 5, "output_per_million_tokens": 5}',
        ],
        'output_per_million_tokens',
      ],
      [['topup', accountId, '--amount', '10000000000001', '--reference', 'big'], 'amount'],
      [['requests', 'resolve', 'req_x', '--capture', '0', '--reason', 'r'], 'amount'],
      [['requests', 'resolve', 'req_x', '--release', '--capture', '5', '--reason', 'r'], 'amount'],
    ];
    for (const [args, field] of refusals) {
      const result = await cli(...args);
      expect(result, args.join(' ')).toMatchObject({
        code: 1,
        json: { error: { code: 'INVALID_INPUT', message: expect.stringContaining(field) } },
      });
    }
    const shown = await cli('accounts', 'show', accountId);
    expect(shown.json).toMatchObject({ balance: 0, held: 0 });
    expect((await cli('keys', 'list', accountId)).json).toEqual({ object: 'list', data: [] });
    expect(await cli('ledger', 'check')).toMatchObject({ code: 0, json: { ok: true } });
  });
});
