import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, expect, it } from 'vitest';
import { generateApiKey, isWellFormedKey } from '../../src/auth/key-format.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { manualClock, startGateway, type TestGateway } from '../helpers/gateway.js';

const models = (gateway: TestGateway, key?: string) =>
  gateway.call('GET', '/v1/models', key === undefined ? {} : { key });

describeEachDialect('API key lifecycle on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });

  it('generates distinctive, checksummed 256-bit keys', () => {
    const key = generateApiKey();
    expect(key).toMatch(/^tgk_[0-9A-Za-z]{49}$/);
    expect(isWellFormedKey(key)).toBe(true);
    const lastRandom = key[40] === 'a' ? 'b' : 'a';
    expect(isWellFormedKey(`${key.slice(0, 40)}${lastRandom}${key.slice(41)}`)).toBe(false);
  });

  it('answers 401 with a distinct code for a missing, malformed, or unknown key', async () => {
    gateway = await startGateway(dialect);
    const missing = await models(gateway);
    const malformed = await models(gateway, 'sk-not-ours');
    const unknown = await models(gateway, generateApiKey());
    const notBearer = await gateway.call('GET', '/v1/models', {
      headers: { authorization: 'Basic abc' },
    });
    expect([missing, malformed, unknown, notBearer].map((response) => response.statusCode)).toEqual(
      [401, 401, 401, 401],
    );
    expect(missing.json()).toMatchObject({ error: { code: 'UNAUTHENTICATED' } });
    expect(malformed.json()).toMatchObject({ error: { code: 'API_KEY_INVALID' } });
    expect(unknown.json()).toMatchObject({ error: { code: 'INVALID_API_KEY' } });
    expect(notBearer.json()).toMatchObject({ error: { code: 'API_KEY_INVALID' } });
    expect(missing.headers['x-service-request-id']).toMatch(/^req_/);
  });

  it('stops an expired key at the moment of expiry', async () => {
    const clock = manualClock();
    gateway = await startGateway(dialect, { clock });
    const expiresAt = new Date(clock.now() + 60_000).toISOString();
    const { key } = await gateway.account(0, { expires_at: expiresAt });
    expect((await models(gateway, key)).statusCode).toBe(200);
    clock.advance(60_000);
    const expired = await models(gateway, key);
    expect(expired.statusCode).toBe(401);
    expect(expired.json()).toMatchObject({
      error: { code: 'INVALID_API_KEY', message: 'this API key has expired' },
    });
  });

  it('stops a disabled key at once on the instance that disabled it, despite the cache', async () => {
    gateway = await startGateway(dialect);
    const { key, keyId } = await gateway.account(0);
    expect((await models(gateway, key)).statusCode).toBe(200);
    await gateway.admin('POST', `/admin/v1/keys/${keyId}/disable`);
    const disabled = await models(gateway, key);
    expect(disabled.statusCode).toBe(401);
    expect(disabled.json()).toMatchObject({
      error: { code: 'INVALID_API_KEY', message: 'this API key is disabled' },
    });
  });

  it('stores only the SHA-256 of a key, never the key', async () => {
    gateway = await startGateway(dialect);
    const { key } = await gateway.account(0);
    const rows = await gateway.services.store.db.selectFrom('api_keys').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(key);
    expect(rows[0]?.key_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses a key sent in a URL and never writes it to the log', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write: (chunk: Buffer, _encoding, done) => void (lines.push(chunk.toString()), done()),
    });
    gateway = await startGateway(dialect, { services: { logger: pino({ level: 'debug' }, sink) } });
    const { key } = await gateway.account(0);
    for (const url of [
      `/v1/models?api_key=${key}`,
      `/v1/models?foo=${key}`,
      `/v1/models?key=whatever`,
    ]) {
      const response = await gateway.call('GET', url, { key });
      expect(response.statusCode, url).toBe(401);
      expect(response.json(), url).toMatchObject({ error: { code: 'UNAUTHENTICATED' } });
    }
    await models(gateway, key);
    await gateway.call('POST', '/v1/embeddings', {
      key,
      body: { model: 'sim-embed', input: 'secret body text' },
    });
    const log = lines.join('');
    expect(log).toContain('"path":"/v1/models"');
    expect(log).not.toContain(key);
    expect(log).not.toContain(key.slice(4, 20));
    expect(log).not.toContain('secret body text');
    expect(log.toLowerCase()).not.toContain('bearer');
  });

  it('shows a key only the models of its allowlist, and refuses the others as not found', async () => {
    gateway = await startGateway(dialect);
    const { key } = await gateway.account(1_000_000, { models: ['sim-rerank'] });
    const list = await models(gateway, key);
    expect(list.json<{ data: { id: string }[] }>().data.map((model) => model.id)).toEqual([
      'sim-rerank',
    ]);
    const refused = await gateway.call('POST', '/v1/embeddings', {
      key,
      body: { model: 'sim-embed', input: 'x' },
    });
    expect(refused.statusCode).toBe(404);
    expect(refused.json()).toMatchObject({ error: { code: 'MODEL_NOT_FOUND', param: 'model' } });
    const none = await gateway.account(0, { models: [] });
    expect((await models(gateway, none.key)).json()).toEqual({ object: 'list', data: [] });
  });
});
