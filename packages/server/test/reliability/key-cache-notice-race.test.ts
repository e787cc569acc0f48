import { sql } from 'kysely';
import { afterEach, expect, it } from 'vitest';
import { hashApiKey } from '../../src/auth/key-format.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * The risk: a key lookup reads the row, a change notice for that key arrives (another instance
 * disabled it) before the lookup stores what it read, and the row as it was before the change is
 * then cached and served until the TTL runs out (60 s in the battery, not the 1 s bound). A lookup
 * overtaken by an eviction answers with what it read but must not cache it.
 */
describeEachDialect('key cache and change notices on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });

  it('a lookup overtaken by a change notice does not cache the row it read before the change', async () => {
    gateway = await startGateway(dialect);
    const { key, keyId } = await gateway.account(0);
    const keys = gateway.services.keys;
    // The lookup's read is in flight when the notice for this key is handled.
    const lookup = keys.authenticate(key);
    keys.forget(hashApiKey(key));
    await lookup;
    // The change the notice announced, made behind this instance's back (on PostgreSQL its own
    // notice follows within milliseconds and could hide the defect; on SQLite nothing does).
    await sql`update api_keys set disabled_at = ${Date.now()} where id = ${keyId}`.execute(
      gateway.services.store.db,
    );
    await expect(keys.authenticate(key)).rejects.toMatchObject({ code: 'INVALID_API_KEY' });
  });
});
