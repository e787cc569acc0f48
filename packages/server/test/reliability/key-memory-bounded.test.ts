import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/dialects.js';
import { manualClock, startGateway, type TestGateway } from '../helpers/gateway.js';

const [sqlite] = dialects;
const REMEMBERED = 2;

/**
 * The risk (issue 21): the key service remembered, for every key it ever served, when it last
 * wrote the key's last use, in a map that only grew, so a long-lived instance facing many keys
 * (or a flood of distinct ones) grew without end. The map is bounded like the authentication
 * cache: a key pushed out is forgotten, and its next use writes `last_used_at` again, even
 * within the minute that would otherwise spare the write. This test makes the bound two keys
 * and watches that from the outside, in the key listing.
 */
describe('the key service remembers a bounded number of keys', () => {
  let gateway: TestGateway;
  const clock = manualClock(Date.parse('2026-11-26T12:00:00Z'));
  let accountId: string;
  const keys: { key: string; keyId: string }[] = [];

  const use = async (key: string) => {
    const response = await gateway.call('GET', '/v1/models', { key });
    expect(response.statusCode, response.body).toBe(200);
  };
  const lastUsed = async (keyId: string) => {
    const listed = (await gateway.admin('GET', `/admin/v1/accounts/${accountId}/keys`)) as {
      data: { id: string; last_used_at: string | null }[];
    };
    return listed.data.find((key) => key.id === keyId)?.last_used_at ?? null;
  };

  beforeAll(async () => {
    if (sqlite === undefined) throw new Error('no SQLite dialect');
    gateway = await startGateway(sqlite, { clock, services: { maxCachedKeys: REMEMBERED } });
    const first = await gateway.account(0);
    accountId = first.accountId;
    keys.push(first, await gateway.newKey(accountId), await gateway.newKey(accountId));
  });
  afterAll(async () => {
    await gateway.close();
  });

  it('a key still remembered is not written again within the minute', async () => {
    const [a] = keys;
    await use(a!.key);
    const firstUse = new Date(clock.now()).toISOString();
    await expect.poll(() => lastUsed(a!.keyId)).toBe(firstUse);
    clock.advance(1_000);
    await use(a!.key);
    // Give a (wrong) second write the time to land before reading again.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await lastUsed(a!.keyId)).toBe(firstUse);
  });

  it('a key pushed out by more keys than the bound is forgotten: its next use is written again', async () => {
    const [a, b, c] = keys;
    clock.advance(1_000);
    await use(b!.key);
    await use(c!.key);
    clock.advance(1_000);
    await use(a!.key);
    const reuse = new Date(clock.now()).toISOString();
    await expect.poll(() => lastUsed(a!.keyId)).toBe(reuse);
  });
});
