import { randomInt, randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { errorStatus } from '@tollgate/protocol';
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import { ADMIN_TOKEN, startGateway, type TestGateway } from '../helpers/gateway.js';
import { png } from '../helpers/media.js';
import { describeEachBackend } from '../helpers/redis.js';

/** Asserts the spec's error shape: the code, its documented status, and the request id header. */
function expectError(response: LightMyRequestResponse, code: keyof typeof errorStatus): void {
  expect(response.statusCode, response.body).toBe(errorStatus[code]);
  const body = response.json<{ error: { code: string; message: string; request_id: string } }>();
  expect(body.error.code).toBe(code);
  expect(body.error.message).toEqual(expect.any(String));
  expect(body.error.request_id).toBe(response.headers['x-service-request-id']);
}

/** Writes a raw HTTP/1.1 request and returns the status, headers and body of the answer. */
function rawHttp(
  port: number,
  request: string,
): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (error: NodeJS.ErrnoException) =>
      error.code === 'ECONNRESET' ? undefined : reject(error),
    );
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]),
        headers: text.slice(0, split).toLowerCase(),
        body: text.slice(split + 4),
      });
    });
  });
}

/** A random documentation-range address, so Redis counters from earlier runs never collide. */
const someAddress = () => `198.51.${randomInt(256)}.${randomInt(1, 255)}`;

describeEachDialect('HTTP hygiene on $name', (dialect) => {
  let gateways: TestGateway[] = [];
  afterEach(async () => {
    for (const gateway of gateways) await gateway.close();
    gateways = [];
  });
  async function start(options: Parameters<typeof startGateway>[1] = {}) {
    const gateway = await startGateway(dialect, options);
    gateways.push(gateway);
    return gateway;
  }

  it('refuses a JSON body declared in a charset other than UTF-8 with 415 naming it, charging nothing', async () => {
    const gateway = await start();
    const { key, accountId } = await gateway.account(1_000_000);
    const body = JSON.stringify({ model: 'sim-embed', input: 'héllo' });
    const send = (contentType: string, payload: Buffer) =>
      gateway.app.inject({
        method: 'POST',
        url: '/v1/embeddings',
        headers: {
          authorization: `Bearer ${key}`,
          'idempotency-key': randomUUID(),
          'content-type': contentType,
        },
        payload,
      });
    const utf16 = await send('application/json; charset=utf-16', Buffer.from(body, 'utf16le'));
    expectError(utf16, 'UNSUPPORTED_MEDIA_TYPE');
    expect(utf16.json()).toMatchObject({ error: { param: 'Content-Type' } });
    expect(utf16.json<{ error: { message: string } }>().error.message).toContain('utf-16');
    const latin1 = await send('application/json;charset="ISO-8859-1"', Buffer.from(body, 'latin1'));
    expectError(latin1, 'UNSUPPORTED_MEDIA_TYPE');
    expect(latin1.json<{ error: { message: string } }>().error.message).toContain('ISO-8859-1');
    expect(await gateway.balance(accountId)).toEqual({
      balance: 1_000_000,
      held: 0,
      available: 1_000_000,
    });
    expect(await gateway.services.store.db.selectFrom('requests').selectAll().execute()).toEqual(
      [],
    );
    for (const utf8 of ['application/json; charset=utf-8', 'application/json; charset="UTF-8"'])
      expect((await send(utf8, Buffer.from(body))).statusCode, utf8).toBe(200);
    await gateway.expectLedgerClean();
  });

  it('answers a malformed percent-encoding, an overlong path parameter and an overlong URL in the error shape', async () => {
    const gateway = await start();
    const { key } = await gateway.account(0);
    const badEncoding = await gateway.call('GET', '/v1/requests/req_%zz', { key });
    expectError(badEncoding, 'INVALID_INPUT');
    expect(badEncoding.json()).toMatchObject({ error: { param: 'path' } });
    expect(badEncoding.body).not.toContain('%zz');
    const longParameter = await gateway.call('GET', `/v1/requests/req_${'a'.repeat(200)}`, {
      key,
    });
    expectError(longParameter, 'INVALID_INPUT');

    // Over Node's 16 KiB header limit: refused by the HTTP parser before Fastify sees a request.
    const port = Number(new URL(await gateway.listen()).port);
    const tooLong = await rawHttp(
      port,
      `GET /v1/models?q=${'x'.repeat(20_000)} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\n\r\n`,
    );
    expect(tooLong.status).toBe(431);
    expect(tooLong.headers).toContain('content-type: application/json');
    const body = JSON.parse(tooLong.body) as { error: { code: string; request_id: string } };
    expect(body.error.code).toBe('HEADERS_TOO_LARGE');
    expect(errorStatus.HEADERS_TOO_LARGE).toBe(431);
    expect(body.error.request_id).toMatch(/^req_/);
    expect(tooLong.headers).toContain(
      `x-service-request-id: ${body.error.request_id.toLowerCase()}`,
    );
  });

  it('answers an unsatisfiable Range with 416 RANGE_NOT_SATISFIABLE and Content-Range bytes */size', async () => {
    const gateway = await start();
    const { key } = await gateway.account(0);
    const image = png(4, 4);
    const uploaded = await gateway.upload(key, image, 'image/png');
    const id = uploaded.json<{ data: { id: string } }>().data.id;
    const response = await gateway.call('GET', `/v1/assets/${id}/content`, {
      key,
      headers: { range: `bytes=${image.length}-` },
    });
    expectError(response, 'RANGE_NOT_SATISFIABLE');
    expect(response.statusCode).toBe(416);
    expect(response.headers['content-range']).toBe(`bytes */${image.length}`);
    expect(response.json()).toMatchObject({ error: { param: 'Range' } });
  });

  it('refuses a request with two Authorization headers instead of trusting the first', async () => {
    const gateway = await start();
    const owner = await gateway.account(0);
    const other = await gateway.account(0);
    const withHeaders = (url: string, authorization: string[]): Promise<LightMyRequestResponse> =>
      // Node sends a header given as an array once per value; light-my-request's type says string.
      gateway.app.inject({
        method: 'GET',
        url,
        headers: { authorization } as unknown as Record<string, string>,
      });
    for (const pair of [
      [`Bearer ${owner.key}`, `Bearer ${other.key}`],
      [`Bearer ${owner.key}`, 'Bearer not-a-key'],
      [`Bearer ${owner.key}`, `Bearer ${owner.key}`],
    ]) {
      const refused = await withHeaders('/v1/models', pair);
      expectError(refused, 'API_KEY_INVALID');
      expect(refused.json()).toMatchObject({ error: { param: 'Authorization' } });
    }
    const admin = await withHeaders('/admin/v1/ledger/check', [
      `Bearer ${ADMIN_TOKEN}`,
      'Bearer wrong-token',
    ]);
    expect(admin.statusCode).toBe(401);
    expect((await withHeaders('/v1/models', [`Bearer ${owner.key}`])).statusCode).toBe(200);
  });

  describeEachBackend('the admin token throttle in %s', (backend, redisUrl) => {
    it('throttles wrong admin tokens per client address: the 11th wrong try is 429, other addresses still get in', async () => {
      const gateway = await start(backend === 'redis' ? { services: { redisUrl } } : {});
      const guesser = someAddress();
      const operator = someAddress();
      const tryToken = (token: string, remoteAddress: string) =>
        gateway.app.inject({
          method: 'GET',
          url: '/admin/v1/ledger/check',
          headers: { authorization: `Bearer ${token}` },
          remoteAddress,
        });
      const statuses = [];
      for (let attempt = 0; attempt < 10; attempt += 1)
        statuses.push((await tryToken(`wrong-${attempt}`, guesser)).statusCode);
      expect(statuses, backend).toEqual(Array.from({ length: 10 }, () => 403));
      const eleventh = await tryToken('wrong-10', guesser);
      expectError(eleventh, 'RATE_LIMITED');
      expect(Number(eleventh.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      // Blocked means blocked: the right token from the guessing address tells it nothing.
      expectError(await tryToken(ADMIN_TOKEN, guesser), 'RATE_LIMITED');
      expect((await tryToken(ADMIN_TOKEN, operator)).statusCode, backend).toBe(200);
      expect((await tryToken('wrong', operator)).statusCode, backend).toBe(403);
    });
  });
});
