import { afterEach, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import { ADMIN_TOKEN, startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Risk: a listing that ignores a parameter it does not know (`GET /v1/shares?x=1` was 200) lets
 * a misspelt filter silently list everything, while the other listings refuse it. Every listing
 * answers an unknown parameter with the same 400 naming it.
 */
describeEachDialect('listings refuse unknown query parameters on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });

  it('GET /v1/shares, /v1/assets and /admin/v1/shares refuse ?x=1 as /v1/requests does', async () => {
    const client = (gateway = await startGateway(dialect));
    const { key } = await client.account(0);
    const reference = await client.call('GET', '/v1/requests?x=1', { key });
    expect(reference.statusCode).toBe(400);
    const { code, param } = reference.json<{ error: { code: string; param?: string } }>().error;
    expect(code).toBe('INVALID_INPUT');
    const expected = { code, param };
    for (const url of ['/v1/shares?x=1', '/v1/assets?x=1']) {
      const refused = await client.call('GET', url, { key });
      expect(refused.statusCode, url).toBe(400);
      expect(refused.json(), url).toMatchObject({ error: expected });
    }
    const admin = await client.app.inject({
      method: 'GET',
      url: '/admin/v1/shares?x=1',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(admin.statusCode).toBe(400);
    expect(admin.json()).toMatchObject({ error: expected });
    // The known ones still work.
    for (const url of ['/v1/shares?limit=5', '/v1/assets?limit=5'])
      expect((await client.call('GET', url, { key })).statusCode, url).toBe(200);
    expect(
      (
        await client.app.inject({
          method: 'GET',
          url: '/admin/v1/shares?state=pending_review&limit=5',
          headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        })
      ).statusCode,
    ).toBe(200);
  });
});
