import type { Quote } from '@tollgate/protocol';
import { afterEach, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { countCreated, h3Quote, submitBody, type H3Input } from '../helpers/h3.js';

/**
 * Risk: the same mistake answered with two codes depending on the family — a wrong echoed
 * amount was `PRICE_CHANGED` for images and videos but `QUOTE_MISMATCH` for H3 — so a client
 * cannot tell "the price moved, quote again" from "the amount you echoed is not this input's
 * quote". One meaning per code (docs/errors.md), for every quoted family.
 */

const families = [
  {
    name: 'images',
    quote: '/v1/images/quote',
    create: '/v1/images/generations',
    body: { model: 'sim-image', prompt: 'a fox', size: '256x256' },
  },
  {
    name: 'videos',
    quote: '/v1/videos/quote',
    create: '/v1/videos',
    body: { model: 'sim-video', prompt: 'a fox', seconds: 1, size: '320x240' },
  },
] as const;

const generate: H3Input = {
  action: 'generate',
  prompt: 'a kite',
  parameters: { resolution: '720p', duration: 4 },
};

describeEachDialect('one meaning per quote-echo code on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  async function expectRefused(
    client: TestGateway,
    key: string,
    url: string,
    body: unknown,
    expected: { code: string; param: string },
  ): Promise<void> {
    const before = await countCreated(client);
    const response = await client.call('POST', url, { key, body });
    expect(response.statusCode, response.body).toBe(409);
    expect(response.json()).toMatchObject({ error: expected });
    expect(await countCreated(client)).toEqual(before);
  }

  for (const family of families) {
    it(`${family.name}: a wrong echoed amount is QUOTE_MISMATCH, a moved price version PRICE_CHANGED`, async () => {
      const client = (gateway = await startGateway(dialect));
      const { key } = await client.account(100_000_000);
      const quoted = await client.call('POST', family.quote, { key, body: family.body });
      expect(quoted.statusCode, quoted.body).toBe(200);
      const quote = quoted.json<Quote>();
      const echo = {
        ...family.body,
        expected_price_version: quote.price_version,
        expected_quote_amount: quote.quoted_amount,
      };
      await expectRefused(
        client,
        key,
        family.create,
        { ...echo, expected_quote_amount: (quote.quoted_amount ?? 0) + 1 },
        { code: 'QUOTE_MISMATCH', param: 'expected_quote_amount' },
      );
      // Only an amount echoed: it is judged at today's version, with the same code.
      await expectRefused(
        client,
        key,
        family.create,
        { ...family.body, expected_quote_amount: 1 },
        { code: 'QUOTE_MISMATCH', param: 'expected_quote_amount' },
      );
      await expectRefused(
        client,
        key,
        family.create,
        { ...echo, expected_price_version: `${family.body.model}@999` },
        { code: 'PRICE_CHANGED', param: 'expected_price_version' },
      );
      const created = await client.call('POST', family.create, { key, body: echo });
      expect(created.statusCode, created.body).toBe(202);
    });
  }

  it('h3: a wrong echoed amount is QUOTE_MISMATCH, a moved price version PRICE_CHANGED', async () => {
    const client = (gateway = await startGateway(dialect));
    const { key } = await client.account(100_000_000);
    const quote = await h3Quote(client, key, generate);
    const echo = submitBody(generate, quote);
    await expectRefused(
      client,
      key,
      '/v1/h3/tasks',
      { ...echo, expected_quote_amount: (quote.quoted_amount ?? 0) + 1 },
      { code: 'QUOTE_MISMATCH', param: 'expected_quote_amount' },
    );
    await expectRefused(
      client,
      key,
      '/v1/h3/tasks',
      { ...echo, expected_price_version: 'sim-h3@999' },
      { code: 'PRICE_CHANGED', param: 'expected_price_version' },
    );
  });
});
