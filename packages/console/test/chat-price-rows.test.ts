import type { ConsoleModel } from '@tollgate/protocol';
import { describe, expect, it } from 'vitest';
import { messageText, type MessageKey } from '../src/messages/index.js';
import { priceRows, rowLabel } from '../src/model-prices.js';

/**
 * Risk: the models page shows a chat model's base prices only, and a member is billed at a length
 * tier, a cache-write price, a per-request fee or a service tier's price the page never showed.
 * Every chat price the gateway bills by is a row, labelled with where it applies.
 */
const chat = (pricing: Partial<ConsoleModel['pricing']>) =>
  ({
    id: 'claude',
    object: 'model',
    created: 0,
    owned_by: 'tollgate',
    capabilities: { families: ['chat'] },
    pricing: { currency: 'CNY_MICRO', price_version: 'claude@1', ...pricing },
  }) as ConsoleModel;

const english = (key: MessageKey) => messageText(key, 'en');

describe('chat price rows', () => {
  it('cache writes, length tiers, the per-request fee and service tiers, each labelled', () => {
    const rows = priceRows(
      chat({
        input_per_million_tokens: 1,
        cache_write_per_million_tokens: 2,
        cache_write_1h_per_million_tokens: 3,
        tiers: [{ above_input_tokens: 200_000, prices: { input_per_million_tokens: 4 } }],
        per_request: 5,
        service_tiers: {
          flex: {
            input_per_million_tokens: 6,
            tiers: [{ above_input_tokens: 100, prices: { output_per_million_tokens: 7 } }],
          },
        },
      }),
    );
    expect(rows.map((row) => [rowLabel(row, english), row.micro])).toEqual([
      ['Input, per million tokens', 1],
      ['Input written to the cache (5 minutes), per million tokens', 2],
      ['Input written to the cache (1 hour), per million tokens', 3],
      ['Input, per million tokens (requests of more than 200000 input tokens)', 4],
      ['Per request', 5],
      ['Input, per million tokens (service tier flex)', 6],
      ['Output, per million tokens (service tier flex, requests of more than 100 input tokens)', 7],
    ]);
  });
});
