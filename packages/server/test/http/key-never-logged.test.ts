import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { afterEach, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/** Writes `request` (raw HTTP/1.1, exactly as given) and returns the whole raw answer. */
function rawHttp(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.on('error', (error: NodeJS.ErrnoException) =>
      // The server may reset a connection it refused; what it answered first still counts.
      error.code === 'ECONNRESET' ? undefined : reject(error),
    );
  });
}

const statusOf = (answer: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]);

/** Every `%XX` escape decoded, repeatedly, so a percent-encoded key cannot hide from the search. */
function decodeEscapes(text: string): string {
  let current = text;
  for (let round = 0; round < 4; round += 1) {
    const next = current.replace(/%([0-9a-f]{2})/gi, (_, hex: string) =>
      String.fromCharCode(Number.parseInt(hex, 16)),
    );
    if (next === current) break;
    current = next;
  }
  return current;
}

/** The key and every 12-character window of its random part: the distinctive parts a leak shows. */
function distinctiveParts(key: string): string[] {
  const body = key.slice('tgk_'.length);
  const windows = Array.from({ length: body.length - 11 }, (_, index) =>
    body.slice(index, index + 12),
  );
  return [key, ...windows];
}

describeEachDialect('a key sent anywhere never reaches the log, on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });

  it('redacts a real key from every log line whatever position it was sent in', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write: (chunk: Buffer, _encoding, done) => void (lines.push(chunk.toString()), done()),
    });
    gateway = await startGateway(dialect, {
      services: { logger: createLogger('trace', sink) },
    });
    const { key } = await gateway.account(1_000_000);
    const percentEncoded = [...key]
      .map((character) => `%${character.charCodeAt(0).toString(16).padStart(2, '0')}`)
      .join('');
    const port = Number(new URL(await gateway.listen()).port);
    const get = (target: string, headers: string[] = []) =>
      rawHttp(
        port,
        [`GET ${target} HTTP/1.1`, 'Host: localhost', 'Connection: close', ...headers, '', ''].join(
          '\r\n',
        ),
      );

    // Every URL that shows a `tgk_` key, however escaped, is refused before authentication (401);
    // the others are refused for what they are.
    const inUrl: [string, number][] = [
      [`/v1/requests/${key}`, 401],
      [`/v1/models;api_key=${key}`, 401],
      [`/v1/models;${key}`, 401],
      [`/v1/models?api_key=${key}`, 401],
      [`/v1/models?q=${key}`, 401],
      [`/v1/models#${key}`, 401],
      [`/v1/models%23${key}`, 401],
      [`/v1/requests/${percentEncoded}`, 401],
      [`/v1/requests/${percentEncoded.toUpperCase()}`, 401],
      [`/v1/requests/tgk%5F${key.slice(4)}`, 401],
      [`/v1/requests/%2574gk_${key.slice(4)}`, 401],
      [`/admin/v1/accounts/${key}`, 401],
      [`/nowhere/${key}`, 401],
      [`/v1/requests/${key.slice(4)}`, 404],
      [`/v1/requests/${key}%zz`, 400],
      [`/v1/requests/${key}${'a'.repeat(200)}`, 400],
    ];
    for (const [target, expected] of inUrl) {
      const status = statusOf(await get(target, [`Authorization: Bearer ${key}`]));
      expect(status, target).toBe(expected);
    }
    // Too long for Node's header parser: answered by the client-error handler, not a route.
    expect(statusOf(await get(`/v1/requests/${key}?pad=${'x'.repeat(20_000)}`))).toBe(431);

    const inHeaders = [
      `X-Api-Key: ${key}`,
      `Cookie: session=${key}`,
      `Referer: https://example.test/?api_key=${key}`,
      `User-Agent: ${key}`,
      `Authorization: ${key}`,
      `Authorization: Token ${key}`,
      `Authorization: Bearer ${key} trailing`,
      `Authorization: Basic ${Buffer.from(`user:${key}`).toString('base64')}`,
    ];
    for (const header of inHeaders) {
      const status = statusOf(await get('/v1/models', [header]));
      expect(status, header).toBeGreaterThanOrEqual(400);
    }
    const twice = await get('/v1/models', [
      `Authorization: Bearer ${key}`,
      `Authorization: Bearer ${key}`,
    ]);
    expect(statusOf(twice)).toBe(401);

    const refusedBodies = [
      { model: key, input: key },
      { model: 'sim-embed', input: 'x', [key]: key },
    ];
    for (const body of refusedBodies) {
      const response = await gateway.call('POST', '/v1/embeddings', { key, body });
      expect(response.statusCode).toBeGreaterThanOrEqual(400);
    }
    const unparsable = await gateway.app.inject({
      method: 'POST',
      url: '/v1/embeddings',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        'idempotency-key': randomUUID(),
      },
      payload: `{"model": "${key}", `,
    });
    expect(unparsable.statusCode).toBe(400);
    const wrongCharset = await gateway.app.inject({
      method: 'POST',
      url: '/v1/embeddings',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json; charset=latin1',
      },
      payload: JSON.stringify({ model: key }),
    });
    expect(wrongCharset.statusCode).toBe(415);

    const log = lines.join('');
    // The access log still names each refused request, with the key-shaped part blotted out.
    expect(log).toContain('"path":"/v1/requests/[redacted]"');
    expect(log).toContain('"path":"/v1/[redacted]"');
    for (const line of lines) {
      for (const text of [line, decodeEscapes(line)]) {
        for (const part of distinctiveParts(key)) expect(text, line).not.toContain(part);
      }
    }
  });
});
