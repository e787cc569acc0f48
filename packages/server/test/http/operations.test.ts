import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';

const [sqlite] = dialects;

describe('operations endpoints and limits', () => {
  let gateway: TestGateway;
  let key: string;
  beforeAll(async () => {
    if (sqlite === undefined) throw new Error('no sqlite dialect');
    gateway = await startGateway(sqlite, {
      config: testConfig({
        limits: { body_bytes: 2_048, requests_per_minute: 100_000, concurrent_requests: 100 },
      }),
    });
    ({ key } = await gateway.account(10_000_000));
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  it('answers health and readiness without a key', async () => {
    expect((await gateway.call('GET', '/healthz')).json()).toEqual({ status: 'ok' });
    expect((await gateway.call('GET', '/readyz')).json()).toEqual({
      status: 'ready',
      database: 'sqlite',
    });
  });

  it('exports Prometheus metrics per route and model, with holds and captures', async () => {
    await gateway.call('POST', '/v1/embeddings', {
      key,
      body: { model: 'sim-embed', input: 'count me' },
    });
    const metrics = await gateway.call('GET', '/metrics');
    expect(metrics.headers['content-type']).toContain('text/plain');
    expect(metrics.body).toMatch(
      /tollgate_http_requests_total\{route="\/v1\/embeddings",model="sim-embed",status="200"\} 1/,
    );
    expect(metrics.body).toContain('tollgate_http_request_duration_seconds_bucket');
    expect(metrics.body).toMatch(/tollgate_holds_total\{outcome="placed"\} 1/);
    expect(metrics.body).toMatch(/tollgate_hold_resolutions_total\{outcome="captured"\} 1/);
  });

  it('serves an OpenAPI 3.1 document listing the public routes', async () => {
    const document = (await gateway.call('GET', '/v1/openapi.json')).json<{
      openapi: string;
      paths: Record<string, unknown>;
    }>();
    expect(document.openapi).toBe('3.1.0');
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining([
        '/v1/models',
        '/v1/embeddings',
        '/v1/rerank',
        '/v1/requests/{id}',
        '/v1/requests/{id}/settle',
      ]),
    );
  });

  it('refuses a body over the limit with 413 BODY_TOO_LARGE, charging nothing', async () => {
    const response = await gateway.call('POST', '/v1/embeddings', {
      key,
      body: { model: 'sim-embed', input: 'x'.repeat(4_000) },
    });
    expect(response.statusCode).toBe(413);
    expect(response.json()).toMatchObject({ error: { code: 'BODY_TOO_LARGE' } });
  });

  it('answers unknown routes with the error shape', async () => {
    const response = await gateway.call('GET', '/v1/nothing-here', { key });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({
      error: { code: 'NOT_FOUND', request_id: response.headers['x-service-request-id'] },
    });
  });
});
