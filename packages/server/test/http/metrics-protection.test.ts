import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/config/load.js';
import { dialects } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * The risk: `/metrics` tells anyone who can reach the port what the business does (routes and
 * models called, holds, micro-yuan captured, tasks by status). With `TOLLGATE_METRICS_TOKEN` set
 * it answers only that bearer token; health and readiness stay open for load balancers.
 */
const [sqlite] = dialects;
const METRICS_TOKEN = 'metrics-token-0123456789abcdef';

describe('/metrics behind TOLLGATE_METRICS_TOKEN', () => {
  let gateway: TestGateway;
  let key: string;
  beforeAll(async () => {
    if (sqlite === undefined) throw new Error('no sqlite dialect');
    gateway = await startGateway(sqlite, { services: { metricsToken: METRICS_TOKEN } });
    ({ key } = await gateway.account(1_000_000));
  });
  afterAll(async () => {
    await gateway.close();
  });

  const scrape = (authorization?: string) =>
    gateway.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: authorization === undefined ? {} : { authorization },
    });

  it('without a token: 401 UNAUTHENTICATED in the error shape, no metric in the body', async () => {
    const response = await scrape();
    expect(response.statusCode).toBe(401);
    expect(response.headers['www-authenticate']).toBe('Bearer realm="metrics"');
    expect(response.json()).toEqual({
      error: {
        code: 'UNAUTHENTICATED',
        message: expect.stringContaining('TOLLGATE_METRICS_TOKEN') as unknown,
        request_id: response.headers['x-service-request-id'],
      },
    });
    expect(response.body).not.toContain('tollgate_');
  });

  it.each([
    ['a wrong token of the same length', `Bearer ${'x'.repeat(METRICS_TOKEN.length)}`],
    ['a prefix of the token', `Bearer ${METRICS_TOKEN.slice(0, 10)}`],
    ['the token and more', `Bearer ${METRICS_TOKEN}0`],
    ['the token without the Bearer scheme', METRICS_TOKEN],
    ['the token as Basic credentials', `Basic ${METRICS_TOKEN}`],
  ])('refuses %s with 401', async (_case, authorization) => {
    const response = await scrape(authorization);
    expect(response.statusCode).toBe(401);
    expect(response.json()).toMatchObject({ error: { code: 'UNAUTHENTICATED' } });
    expect(response.body).not.toContain('tollgate_');
  });

  it('an API key is not the metrics token', async () => {
    const response = await scrape(`Bearer ${key}`);
    expect(response.statusCode).toBe(401);
  });

  it('two Authorization headers are refused, even when one holds the token', async () => {
    const response = await gateway.app.inject({
      method: 'GET',
      url: '/metrics',
      // Node sends a header given as an array once per value; light-my-request's type says string.
      headers: { authorization: [`Bearer ${METRICS_TOKEN}`, 'Bearer other'] } as unknown as Record<
        string,
        string
      >,
    });
    expect(response.statusCode).toBe(401);
    expect(response.body).not.toContain('tollgate_');
  });

  it('the right token gets the Prometheus text', async () => {
    const response = await scrape(`Bearer ${METRICS_TOKEN}`);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('text/plain');
    expect(response.body).toContain('tollgate_http_requests_total');
  });

  it('health and readiness stay open without any token', async () => {
    const health = await gateway.app.inject({ method: 'GET', url: '/healthz' });
    expect(health.statusCode).toBe(200);
    expect(health.json()).toEqual({ status: 'ok' });
    const ready = await gateway.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready', database: 'sqlite' });
  });
});

describe('/metrics without TOLLGATE_METRICS_TOKEN (the default)', () => {
  it('stays open, as before', async () => {
    if (sqlite === undefined) throw new Error('no sqlite dialect');
    const gateway = await startGateway(sqlite);
    try {
      const response = await gateway.app.inject({ method: 'GET', url: '/metrics' });
      expect(response.statusCode).toBe(200);
      expect(response.body).toContain('tollgate_http_requests_total');
    } finally {
      await gateway.close();
    }
  });
});

describe('TOLLGATE_METRICS_TOKEN in the environment', () => {
  it('is read by the settings, and absent means open', () => {
    expect(loadSettings({ TOLLGATE_METRICS_TOKEN: METRICS_TOKEN }).metricsToken).toBe(
      METRICS_TOKEN,
    );
    expect(loadSettings({}).metricsToken).toBeUndefined();
    // An empty variable counts as unset, like every other one.
    expect(loadSettings({ TOLLGATE_METRICS_TOKEN: '' }).metricsToken).toBeUndefined();
  });

  it('a short token is refused at start, naming the variable', () => {
    expect(() => loadSettings({ TOLLGATE_METRICS_TOKEN: 'short' })).toThrow(
      'invalid environment variable TOLLGATE_METRICS_TOKEN: must be at least 16 characters',
    );
  });
});
