import { afterEach, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import { ADMIN_TOKEN, startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * `GET /admin/v1/requests` lists one queue at a time: `?usage_exceeded_cap=unreviewed|all` or
 * `?status=submission_unknown`. Its query schema is made of a zod `z.xor` (`oneFieldOf`,
 * errors/input-schema.ts) and written as one object with a `oneOf` of which field is required.
 * Risk: written as zod's own `oneOf` of whole objects, Ajv would judge `?status=x` by the first
 * branch and answer that `usage_exceeded_cap` is required, instead of naming the value given.
 */
describeEachDialect('the admin request queue query on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });

  it('names the field given and its values, requires one queue, and refuses two', async () => {
    const client = (gateway = await startGateway(dialect));
    const get = async (query: string) => {
      const response = await client.app.inject({
        method: 'GET',
        url: `/admin/v1/requests${query}`,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      return {
        status: response.statusCode,
        message: response.json<{ error?: { message: string } }>().error?.message,
      };
    };
    for (const query of [
      '?usage_exceeded_cap=unreviewed',
      '?usage_exceeded_cap=all',
      '?status=submission_unknown',
    ])
      expect(await get(query), query).toEqual({ status: 200, message: undefined });
    expect(await get('')).toEqual({
      status: 400,
      message: 'querystring.usage_exceeded_cap is required',
    });
    expect(await get('?status=x')).toEqual({
      status: 400,
      message: 'querystring.status must be submission_unknown',
    });
    expect(await get('?usage_exceeded_cap=x')).toEqual({
      status: 400,
      message: 'querystring.usage_exceeded_cap must be unreviewed or all',
    });
    expect(await get('?usage_exceeded_cap=all&status=submission_unknown')).toMatchObject({
      status: 400,
    });
    expect(await get('?status=submission_unknown&x=1')).toEqual({
      status: 400,
      message: 'querystring.x is not a known field',
    });
  });
});
