import { afterEach, describe, expect, it } from 'vitest';
import { clientAddressResolver } from '../../src/auth/client-address.js';
import { dialects } from '../helpers/dialects.js';
import { ADMIN_TOKEN, startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';

/**
 * A key's `allowed_ips`: a stolen key must not work from elsewhere, and a caller must not be
 * able to claim another address by writing `X-Forwarded-For` itself. The refusal names the rule,
 * never the list.
 */
const [sqlite] = dialects;

describe('IP allowlists per key', () => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
  });

  const models = (client: TestGateway, key: string, remoteAddress: string, forwardedFor?: string) =>
    client.app.inject({
      method: 'GET',
      url: '/v1/models',
      remoteAddress,
      headers: {
        authorization: `Bearer ${key}`,
        ...(forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor }),
      },
    });

  it('admits IPv4, IPv6 and IPv4-mapped addresses inside the blocks and refuses others', async () => {
    gateway = await startGateway(sqlite!);
    const { key, keyId } = await gateway.account(0, {
      allowed_ips: ['203.0.113.0/24', '2001:db8::/32'],
    });
    expect((await models(gateway, key, '203.0.113.7')).statusCode).toBe(200);
    expect((await models(gateway, key, '::ffff:203.0.113.7')).statusCode).toBe(200);
    expect((await models(gateway, key, '2001:db8:1::5')).statusCode).toBe(200);
    for (const outside of ['198.51.100.1', '::ffff:198.51.100.1', '2001:db9::1', '127.0.0.1']) {
      const refused = await models(gateway, key, outside);
      expect(refused.statusCode, outside).toBe(403);
      const error = refused.json<{ error: { code: string; message: string } }>().error;
      expect(error.code).toBe('PERMISSION_DENIED');
      expect(error.message).toContain('allowed_ips');
      expect(error.message).not.toContain('203.0.113');
      expect(error.message).not.toContain(outside);
    }
    // A mapped block is the IPv4 block; PATCH replaces the list at once, null lifts it.
    const patched = await gateway.admin('PATCH', `/admin/v1/keys/${keyId}`, {
      allowed_ips: ['::ffff:198.51.100.0/120'],
    });
    expect(patched['allowed_ips']).toEqual(['198.51.100.0/24']);
    expect((await models(gateway, key, '198.51.100.1')).statusCode).toBe(200);
    expect((await models(gateway, key, '203.0.113.7')).statusCode).toBe(403);
    await gateway.admin('PATCH', `/admin/v1/keys/${keyId}`, { allowed_ips: null });
    expect((await models(gateway, key, '203.0.113.7')).statusCode).toBe(200);
  });

  it('believes X-Forwarded-For only from a trusted proxy, never from the caller itself', async () => {
    gateway = await startGateway(sqlite!, {
      config: testConfig({ server: { trusted_proxies: ['10.0.0.0/8'] } }),
    });
    const { key } = await gateway.account(0, { allowed_ips: ['203.0.113.7'] });
    // Through the trusted proxy: the client is the rightmost untrusted hop.
    expect((await models(gateway, key, '10.1.1.1', '203.0.113.7')).statusCode).toBe(200);
    expect((await models(gateway, key, '10.1.1.1', '203.0.113.7, 10.2.2.2')).statusCode).toBe(200);
    // A caller spoofing the header through the proxy: the proxy appends the real address.
    expect((await models(gateway, key, '10.1.1.1', '203.0.113.7, 198.51.100.9')).statusCode).toBe(
      403,
    );
    // The spoofed header sent straight from an untrusted peer is ignored.
    expect((await models(gateway, key, '198.51.100.9', '203.0.113.7')).statusCode).toBe(403);
    // Garbage in the header stops at the last trusted hop, which is not the client's address.
    expect((await models(gateway, key, '10.1.1.1', '203.0.113.7, not-an-ip')).statusCode).toBe(403);
  });

  it('refuses malformed allowed_ips naming the field, creating and changing nothing', async () => {
    gateway = await startGateway(sqlite!);
    const { accountId, keyId } = await gateway.account(0);
    const bad: unknown[] = [
      '10.0.0.0/8',
      [],
      ['10.0.0.0/33'],
      ['10.0.0.300/8'],
      ['2001:db8::/129'],
      ['::ffff:10.0.0.0/64'],
      [42],
      ['10.0.0.0/8/1'],
    ];
    for (const allowed_ips of bad) {
      for (const [method, url] of [
        ['POST', `/admin/v1/accounts/${accountId}/keys`],
        ['PATCH', `/admin/v1/keys/${keyId}`],
      ] as const) {
        const response = await gateway.app.inject({
          method,
          url,
          headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
          payload: { allowed_ips },
        });
        expect(response.statusCode, JSON.stringify(allowed_ips)).toBe(400);
        expect(response.json()).toMatchObject({
          error: { code: 'INVALID_INPUT', param: 'allowed_ips' },
        });
      }
    }
    const keys = await gateway.admin('GET', `/admin/v1/accounts/${accountId}/keys`);
    expect(keys['data']).toEqual([expect.objectContaining({ id: keyId, allowed_ips: null })]);
  });
});

describe('the client address', () => {
  it('is the socket peer without trusted proxies, whatever X-Forwarded-For says', () => {
    const resolve = clientAddressResolver([]);
    expect(resolve('198.51.100.9', '203.0.113.7')).toBe('198.51.100.9');
    expect(resolve('::ffff:198.51.100.9', undefined)).toBe('198.51.100.9');
  });

  it('walks X-Forwarded-For from the right past trusted IPv4 and IPv6 proxies', () => {
    const resolve = clientAddressResolver(['10.0.0.0/8', 'fd00::/8']);
    expect(resolve('fd00::1', '2001:db8::7, 10.0.0.2')).toBe('2001:db8::7');
    expect(resolve('10.0.0.1', ['203.0.113.1', '10.0.0.3'])).toBe('203.0.113.1');
    expect(resolve('10.0.0.1', '10.0.0.5')).toBe('10.0.0.5');
  });
});
