import type { ConsoleModel, ConsoleModelList, ModelList } from '@tollgate/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { keysReach } from '../../src/http/console/model-routes.js';
import { consoleCall, consoleUser } from '../helpers/console-session.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

const CALLABLE = '/console/api/models/callable';

/**
 * The member's models page (docs/console.md, "Models page"): the risk is a member shown a model
 * none of their keys may call, another account's reach, or a price other than the one the
 * gateway will charge.
 */
describeEachDialect(
  'console models page: what the member’s keys may call, at what price, on $name',
  (dialect) => {
    let gateway: TestGateway | undefined;
    afterEach(async () => {
      await gateway?.close();
      gateway = undefined;
    });

    const listOf = async (client: TestGateway, member: Awaited<ReturnType<typeof consoleUser>>) => {
      const answer = await consoleCall(client, member, 'GET', CALLABLE);
      expect(answer.statusCode, answer.body).toBe(200);
      return answer.json<ConsoleModelList>();
    };

    it('lists only what the usable keys may call together, as /v1/models lists it for such a key; other accounts count for nothing', async () => {
      const client = (gateway = await startGateway(dialect));
      // The account's first key may call sim-chat only; a second, disabled, key could call anything.
      const mine = await client.account(0, { models: ['sim-chat'] });
      const open = await client.newKey(mine.accountId);
      await client.admin('POST', `/admin/v1/keys/${open.keyId}/disable`);
      // Another account's key without an allowlist.
      await client.account(0);
      const member = await consoleUser(client, 'reach@example.test', 'member', mine.accountId);

      const list = await listOf(client, member);
      expect(list.basis).toBe('keys');
      expect(list.data.map((model) => model.id)).toEqual(['sim-chat']);
      const v1 = await client.call('GET', '/v1/models', { key: mine.key });
      expect(list.data).toEqual(v1.json<ModelList>().data);

      // A second usable key limited to sim-embed widens the list to both, in the catalog's order.
      await client.newKey(mine.accountId, { models: ['sim-embed'] });
      expect((await listOf(client, member)).data.map((model) => model.id)).toEqual([
        'sim-chat',
        'sim-embed',
      ]);
    });

    it('with a key without an allowlist, every configured model, each at the price book’s current prices (H3 per second too)', async () => {
      const client = (gateway = await startGateway(dialect));
      const mine = await client.account(0);
      const member = await consoleUser(client, 'prices@example.test', 'member', mine.accountId);
      // A price change is a new version: the page shows it, not the configuration's.
      await client.admin('PUT', '/admin/v1/models/sim-h3/prices', {
        h3_per_second: { '2K': 121_000, '1080p': 81_000, '720p': 45_000, '480p': 21_000 },
        h3_per_second_with_audio: {
          '720p': 61_000,
          '480p': 31_000,
          '2K': 161_000,
          '1080p': 111_000,
        },
        per_reference_image: 6_000,
        input_per_million_tokens: 2_100_000,
        output_per_million_tokens: 8_100_000,
      });
      const list = await listOf(client, member);
      expect(list.basis).toBe('keys');
      expect(list.data.map((model) => model.id)).toEqual(
        client.services.config.models.map((model) => model.id),
      );
      const byId = new Map<string, ConsoleModel>(list.data.map((model) => [model.id, model]));
      for (const model of client.services.config.models) {
        const current = await client.services.prices.currentFor(model.id);
        const shown = byId.get(model.id);
        expect(shown?.pricing.price_version).toBe(current.priceVersion);
        for (const field of [
          'input_per_million_tokens',
          'cached_input_per_million_tokens',
          'output_per_million_tokens',
          'reasoning_per_million_tokens',
          'per_image',
          'per_second',
          'per_second_with_audio',
          'per_reference_image',
        ] as const) {
          expect(shown?.pricing[field], `${model.id} ${field}`).toEqual(current.prices[field]);
        }
        expect(shown?.capabilities.families).toEqual(model.families);
      }
      const h3 = byId.get('sim-h3');
      expect(h3?.pricing.price_version).toBe('sim-h3@2');
      // In the spec's order of resolutions, whatever order the change gave them in.
      expect(h3?.h3_pricing).toEqual({
        h3_per_second: { '480p': 21_000, '720p': 45_000, '1080p': 81_000, '2K': 121_000 },
        h3_per_second_with_audio: {
          '480p': 31_000,
          '720p': 61_000,
          '1080p': 111_000,
          '2K': 161_000,
        },
        free_reference_images: 5,
      });
      expect(Object.keys(h3?.h3_pricing?.h3_per_second ?? {})).toEqual([
        '480p',
        '720p',
        '1080p',
        '2K',
      ]);
      expect(Object.keys(h3?.h3_pricing?.h3_per_second_with_audio ?? {})).toEqual([
        '480p',
        '720p',
        '1080p',
        '2K',
      ]);
      expect(byId.get('sim-chat')?.h3_pricing).toBeUndefined();
      expect(byId.get('sim-chat')?.capabilities.combinations).toEqual(
        client.services.config.models.find((model) => model.id === 'sim-chat')?.combinations,
      );
    });

    it('an account without a usable key is shown what a new key may be allowed, and told so', async () => {
      const client = (gateway = await startGateway(dialect));
      const mine = await client.account(0, { models: ['sim-chat'] });
      await client.admin('POST', `/admin/v1/keys/${mine.keyId}/disable`);
      const member = await consoleUser(client, 'nokey@example.test', 'member', mine.accountId);
      const list = await listOf(client, member);
      expect(list.basis).toBe('new_key');
      expect(list.data.map((model) => model.id)).toEqual(
        client.services.config.models.map((model) => model.id),
      );
    });

    it('is refused without a session (401), with an API key alone (401) and to an operator (403)', async () => {
      const client = (gateway = await startGateway(dialect));
      const mine = await client.account(0);
      const anonymous = await client.app.inject({ method: 'GET', url: CALLABLE });
      expect(anonymous.statusCode).toBe(401);
      expect(anonymous.json()).toMatchObject({ error: { code: 'UNAUTHENTICATED' } });
      const withKey = await client.app.inject({
        method: 'GET',
        url: CALLABLE,
        headers: { authorization: `Bearer ${mine.key}` },
      });
      expect(withKey.statusCode).toBe(401);
      const operator = await consoleUser(client, 'op-models@example.test', 'operator');
      const refused = await consoleCall(client, operator, 'GET', CALLABLE);
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toMatchObject({ error: { code: 'PERMISSION_DENIED' } });
    });
  },
);

describe('keysReach: which keys count', () => {
  const now = Date.parse('2030-01-01T00:00:00Z');
  const key = (models: string[] | null, extra: { disabled?: boolean; expires?: string } = {}) => ({
    models,
    disabled_at: extra.disabled === true ? '2029-12-01T00:00:00Z' : null,
    expires_at: extra.expires ?? null,
  });

  it('unions allowlists, opens everything for a key without one, and skips disabled and expired keys', () => {
    expect(keysReach([key(['a']), key(['b', 'a'])], now)).toEqual({
      basis: 'keys',
      models: ['a', 'b'],
    });
    expect(keysReach([key(['a']), key(null)], now)).toEqual({ basis: 'keys', models: null });
    expect(
      keysReach(
        [
          key(['a']),
          key(null, { disabled: true }),
          key(['b'], { expires: '2029-12-31T23:59:59Z' }),
          key(['c'], { expires: '2030-01-02T00:00:00Z' }),
        ],
        now,
      ),
    ).toEqual({ basis: 'keys', models: ['a', 'c'] });
    expect(keysReach([key(null, { disabled: true })], now)).toEqual({
      basis: 'new_key',
      models: null,
    });
    expect(keysReach([], now)).toEqual({ basis: 'new_key', models: null });
  });
});
