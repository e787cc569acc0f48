import { randomUUID } from 'node:crypto';
import type { H3Task } from '@tollgate/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { checkJsonShape } from '../../src/util/json-shape.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { finishedH3, h3QuoteAndSubmit } from '../helpers/h3.js';
import { finishedTask, type TaskBody } from '../helpers/tasks.js';

/**
 * Risk: a body holding the same key twice means two things — the gateway's parser keeps the
 * last value, a proxy or log reader in front of it may keep the first — so a settle that a
 * reviewer saw as `actual_amount: 1` charges 20,000. "Exactly three fields" refuses a second
 * copy of any of them, and so does every other JSON body (one rule, in the body parser's scan).
 */

/** Raw JSON text: the settle body with `actual_amount` twice, the first copy a lie. */
function twiceAmount(actual: number, priceVersion: string, confirmation: string): string {
  return `{"actual_amount":1,"price_version":${JSON.stringify(priceVersion)},"confirmation":"${confirmation}","actual_amount":${actual}}`;
}

describeEachDialect('duplicate JSON keys on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  function raw(client: TestGateway, key: string, url: string, payload: string) {
    return client.app.inject({
      method: 'POST',
      url,
      headers: {
        authorization: `Bearer ${key}`,
        'idempotency-key': randomUUID(),
        'content-type': 'application/json',
      },
      payload,
    });
  }

  it('a settle body with actual_amount twice is 400 naming it, for images, videos and H3: nothing charged, the task still pending', async () => {
    const client = (gateway = await startGateway(dialect));
    const { key, accountId } = await client.account(100_000_000);
    const targets: { url: string; body: string; read: string }[] = [];
    for (const [family, create, body] of [
      [
        'images',
        '/v1/images/generations',
        { model: 'sim-image', prompt: 'a fox', size: '256x256' },
      ],
      [
        'videos',
        '/v1/videos',
        { model: 'sim-video', prompt: 'a fox', seconds: 1, size: '320x240' },
      ],
    ] as const) {
      const created = await client.call('POST', create, { key, body });
      expect(created.statusCode, created.body).toBe(202);
      const path = `/v1/${family}/${created.json<TaskBody>().id}`;
      const task = await finishedTask(client, key, path);
      const amount = task.billing.actual_amount ?? 0;
      targets.push({
        url: `${path}/settle`,
        body: twiceAmount(amount, task.billing.price_version, 'settle_original_approved'),
        read: path,
      });
    }
    const { response } = await h3QuoteAndSubmit(client, key, {
      action: 'generate',
      prompt: 'a kite',
      parameters: { resolution: '720p', duration: 4 },
    });
    expect(response.statusCode, response.body).toBe(202);
    const h3 = await finishedH3(client, key, response.json<H3Task>().id);
    targets.push({
      url: `/v1/h3/tasks/${h3.id}/settle`,
      body: twiceAmount(
        h3.billing.actual_amount ?? 0,
        h3.billing.price_version,
        'settle_original_h3',
      ),
      read: `/v1/h3/tasks/${h3.id}`,
    });

    const before = await client.balance(accountId);
    for (const target of targets) {
      const refused = await raw(client, key, target.url, target.body);
      expect(refused.statusCode, `${target.url} ${refused.body}`).toBe(400);
      expect(refused.json()).toMatchObject({
        error: { code: 'INVALID_INPUT', param: 'actual_amount' },
      });
      const task = (await client.call('GET', target.read, { key })).json<TaskBody>();
      expect(task.billing).toMatchObject({ settlement_pending: true });
    }
    expect(await client.balance(accountId)).toEqual(before);
    expect(
      await client.services.store.db
        .selectFrom('requests')
        .select('id')
        .where('path', 'like', '%/settle')
        .execute(),
    ).toEqual([]);
  }, 90_000);

  it('any JSON body with a repeated key is refused before anything is recorded, naming the top-level field', async () => {
    const client = (gateway = await startGateway(dialect));
    const { key, accountId } = await client.account(10_000_000);
    const nested = await raw(
      client,
      key,
      '/v1/chat/completions',
      '{"model":"sim-chat","messages":[{"role":"user","content":"hi","role":"system"}]}',
    );
    expect(nested.statusCode, nested.body).toBe(400);
    expect(nested.json()).toMatchObject({ error: { code: 'INVALID_INPUT', param: 'messages' } });
    // An escape spells the same key: the parser decodes it, so does the scan.
    const escaped = await raw(
      client,
      key,
      '/v1/embeddings',
      '{"model":"sim-embed","input":"a","\\u0069nput":"b"}',
    );
    expect(escaped.statusCode, escaped.body).toBe(400);
    expect(escaped.json()).toMatchObject({ error: { code: 'INVALID_INPUT', param: 'input' } });
    expect(await client.services.store.db.selectFrom('requests').select('id').execute()).toEqual(
      [],
    );
    expect((await client.balance(accountId)).held).toBe(0);
  });
});

describe('the duplicate-key scan reads keys as the parser does', () => {
  const scan = (text: string) =>
    checkJsonShape(text, { maxDepth: 64, maxItems: Number.MAX_SAFE_INTEGER });

  it('finds a key twice in one object, at any depth, and nothing else', () => {
    expect(scan('{"a":1,"b":2,"a":3}')).toEqual({ kind: 'duplicate', path: [], key: 'a' });
    expect(scan('{"x":[{"a":1},{"b":1,"b":2}]}')).toEqual({
      kind: 'duplicate',
      path: ['x', 1],
      key: 'b',
    });
    // The same key in sibling or nested objects, or as a value, is no duplicate.
    expect(scan('{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}],"c":"a"}')).toBeUndefined();
    expect(scan('{"a\\"":1,"a":2}')).toBeUndefined();
    expect(scan('{"\\u0061":1,"a":2}')).toEqual({ kind: 'duplicate', path: [], key: 'a' });
  });
});
