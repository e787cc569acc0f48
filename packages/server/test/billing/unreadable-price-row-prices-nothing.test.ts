import { Writable } from 'node:stream';
import { sql } from 'kysely';
import { afterEach, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * The risk: a price row was cast, not parsed. A row edited by hand or written by a broken tool
 * (a price as text, a fraction, a missing input price) would have priced requests on garbage.
 * It is parsed with the schema that writes prices; a row that fails it prices nothing: 503
 * MODEL_UNAVAILABLE naming the version, nothing held or charged, and the operator sees it logged.
 */
describeEachDialect('an unreadable price row on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  for (const [name, corrupted] of [
    ['a price as text', '{"input_per_million_tokens":"cheap"}'],
    ['a fractional price', '{"input_per_million_tokens":0.5}'],
    ['a misspelt field', '{"input_per_milion_tokens":500000}'],
    ['not JSON', 'garbage'],
  ] as const)
    it(`charges nothing on ${name}, and says the version is unreadable`, async () => {
      const lines: string[] = [];
      const sink = new Writable({
        write: (chunk: Buffer, _encoding, done) => void (lines.push(chunk.toString()), done()),
      });
      gateway = await startGateway(dialect, { services: { logger: createLogger('info', sink) } });
      const { accountId, key } = await gateway.account(10_000_000);
      await sql`update model_prices set prices = ${corrupted} where price_version = 'sim-embed@1'`.execute(
        gateway.services.store.db,
      );

      const answer = await gateway.call('POST', '/v1/embeddings', {
        key,
        body: { model: 'sim-embed', input: 'priced on what?' },
      });
      expect(answer.statusCode, answer.body).toBe(503);
      expect(answer.json()).toEqual({
        error: {
          code: 'MODEL_UNAVAILABLE',
          message: 'price version sim-embed@1 is unreadable',
          request_id: expect.stringMatching(/^req_/),
        },
      });
      expect(await gateway.balance(accountId)).toEqual({
        balance: 10_000_000,
        held: 0,
        available: 10_000_000,
      });
      const reported = lines
        .map((line) => JSON.parse(line) as { level: number; priceVersion?: string; msg: string })
        .filter((line) => line.level === 50 && line.priceVersion === 'sim-embed@1');
      expect(reported.length).toBeGreaterThan(0);
      expect(reported[0]?.msg).toMatch(/unreadable/);
    });
});
