import { afterEach, expect, it } from 'vitest';
import type { ConfigFile } from '../../src/config/schema.js';
import { priceLookedUpUsage } from '../../src/requests/looked-up-usage.js';
import { dialects } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';

/**
 * Risk: a record reconciled by look-up is charged by another rule than the live call would have
 * charged (a formula written twice that drifted), or the live call never named its record
 * upstream (then the look-up says "never received" and the work done is released unpaid). Each
 * text family is called through its route; the upstream is then asked by the record's id, and the
 * looked-up usage must price to the live bill, to the micro-yuan and the same rule.
 */

const [sqlite] = dialects;
const config: ConfigFile = {
  ...testConfig(),
  upstreams: { simulator: { kind: 'simulator', request_lookup: true } },
};

let gateway: TestGateway | undefined;
afterEach(async () => {
  await gateway?.expectLedgerClean();
  await gateway?.close();
  gateway = undefined;
});

it.each([
  ['/v1/embeddings', { model: 'sim-embed', input: ['the quick brown fox', 'jumps'] }],
  ['/v1/rerank', { model: 'sim-rerank', query: 'fox', documents: ['a fox', 'a dog', 'foxes'] }],
  [
    '/v1/chat/completions',
    { model: 'sim-chat', messages: [{ role: 'user', content: 'say something long enough' }] },
  ],
])('%s: the looked-up usage prices to the live bill', async (path, body) => {
  if (sqlite === undefined) throw new Error('SQLite always runs');
  gateway = await startGateway(sqlite, { config });
  const { key } = await gateway.account(10_000_000);
  const response = await gateway.call('POST', path, { key, body });
  expect(response.statusCode, response.body).toBe(200);
  const requestId = response.headers['x-service-request-id'] as string;
  const row = await gateway.services.requests.records.byId(requestId);
  if (row === undefined || row.price_version === null) throw new Error('no record');
  expect(row.status).toBe('succeeded');

  const lookup = gateway.services.providers.requestLookup('simulator');
  if (lookup === undefined) throw new Error('request_lookup is on');
  const found = await lookup(requestId);
  expect(found.status).toBe('completed');
  const entry = await gateway.services.prices.byVersion(row.price_version);
  if (entry === undefined || found.status !== 'completed') throw new Error('unpriceable');
  const price = priceLookedUpUsage(path, found.usage, entry.prices);

  expect(price?.amount).toBe(row.amount);
  expect(price?.rule).toBe(row.pricing_rule);
  expect(price?.usage).toEqual(JSON.parse(row.usage ?? 'null'));
});
