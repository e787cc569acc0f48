import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { checkLedger } from '../../src/billing/ledger-check.js';
import { defaultConfig } from '../../src/config/default-config.js';
import { parseConfig } from '../../src/config/load.js';
import type { ConfigFile } from '../../src/config/schema.js';
import { buildApp } from '../../src/http/app.js';
import { createServices, type ServiceOptions, type Services } from '../../src/services.js';
import type { Clock } from '../../src/util/effects.js';
import { dropSchema, freshMigrated, type TestDialect } from './dialects.js';

export { manualClock } from './clock.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

/**
 * `TOLLGATE_TEST_EVENT_LOG=1` runs every gateway of the suite on the event log
 * (`accounting.event_log`, docs/event-log.md) unless its test chose the setting itself: the money
 * suites both ways (decision 0019, point 7).
 */
function withEventLogFromEnvironment(config: ConfigFile): ConfigFile {
  if (!eventLogFromEnvironment(config)) return config;
  return {
    ...config,
    accounting: { event_log: true },
    postgres: { named_statements: true, ...config.postgres, batch_money: false },
  };
}

function eventLogFromEnvironment(config: ConfigFile | undefined): boolean {
  return process.env['TOLLGATE_TEST_EVENT_LOG'] === '1' && config?.accounting === undefined;
}

/**
 * Waits until the event log is empty (on PostgreSQL another test file's open transaction can hold
 * the projector back for a while: events/projector.ts, the xmin rule).
 */
function drainer(services: Services): () => Promise<void> {
  return async () => {
    const log = services.requests.records.log;
    const deadline = Date.now() + 60_000;
    while (log !== undefined && (await log.backlog()).pending > 0) {
      if (Date.now() > deadline) throw new Error('the event log projector never caught up');
      if ((await log.catchUp()) === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
}

/** The default configuration with limits high enough for concurrency tests. */
export function testConfig(overrides: Partial<ConfigFile> = {}): ConfigFile {
  return {
    ...defaultConfig,
    limits: {
      body_bytes: 1024 * 1024,
      requests_per_minute: 100_000,
      concurrent_requests: 10_000,
      concurrent_requests_per_account: 10_000,
    },
    ...overrides,
  };
}

/** Short simulator timeouts, so `[sim:hang]` becomes an unconfirmed outcome quickly. */
export function shortTimeoutsConfig(): ConfigFile {
  return testConfig({
    upstreams: {
      simulator: {
        kind: 'simulator',
        timeouts: { connect_ms: 1_000, first_byte_ms: 300, idle_ms: 300 },
      },
    },
  });
}

/** Only `sim-embed` (8 dimensions), at `inputPerMillionTokens` micro-yuan per million tokens. */
export function embeddingsOnlyConfig(inputPerMillionTokens: number): ConfigFile {
  return testConfig({
    models: [
      {
        id: 'sim-embed',
        upstream: 'simulator',
        families: ['embeddings'],
        prices: { input_per_million_tokens: inputPerMillionTokens },
        default_dimensions: 8,
      },
    ],
  });
}

/**
 * Only `sim-embed`, at 1 micro-yuan per million tokens: every small request holds and costs
 * exactly 1, so balances count requests.
 */
export function oneMicroYuanEmbeddingsConfig(): ConfigFile {
  return embeddingsOnlyConfig(1);
}

export interface TestGateway {
  app: FastifyInstance;
  services: Services;
  /** Admin API call; throws unless the status is 2xx. */
  admin(
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    url: string,
    body?: unknown,
  ): Promise<Record<string, unknown>>;
  /** A new account with `balance` micro-yuan and one personal key. */
  account(
    balance: number,
    keyOptions?: Record<string, unknown>,
  ): Promise<{ accountId: string; key: string; keyId: string }>;
  newKey(
    accountId: string,
    options?: Record<string, unknown>,
  ): Promise<{ key: string; keyId: string }>;
  balance(accountId: string): Promise<{ balance: number; held: number; available: number }>;
  /** `/v1` call with a key; business POSTs get a fresh Idempotency-Key unless one is given. */
  call(
    method: 'GET' | 'POST' | 'HEAD' | 'DELETE',
    url: string,
    options?: {
      key?: string;
      body?: unknown;
      idempotencyKey?: string | null;
      headers?: Record<string, string>;
    },
  ): Promise<LightMyRequestResponse>;
  /** `POST /v1/assets` with a raw body. */
  upload(
    key: string,
    body: Buffer,
    type: string,
    headers?: Record<string, string>,
  ): Promise<LightMyRequestResponse>;
  /** Listens on a random loopback port (for real HTTP clients); returns the `/v1` base URL. */
  listen(): Promise<string>;
  /** Asserts every ledger invariant holds. */
  expectLedgerClean(): Promise<void>;
  close(): Promise<void>;
}

export async function startGateway(
  dialect: TestDialect,
  options: {
    config?: ConfigFile;
    clock?: Clock;
    adminToken?: string | undefined;
    services?: Partial<ServiceOptions>;
  } = {},
): Promise<TestGateway> {
  const database = await freshMigrated(dialect);
  const assetsDir = mkdtempSync(path.join(tmpdir(), 'tollgate-assets-'));
  const services = await createServices({
    assetsDir,
    config: parseConfig(withEventLogFromEnvironment(options.config ?? testConfig()), 'test'),
    ...database,
    adminToken: 'adminToken' in options ? options.adminToken : ADMIN_TOKEN,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...options.services,
  });
  const app = await buildApp(services);
  // On the event log by TOLLGATE_TEST_EVENT_LOG (not by the test's own choice), every call made
  // through this helper returns once the projector has applied what it wrote: the suites written
  // for records that are rows at once read the tables and listings right after a call. What the
  // log does while events are pending is the event-log suites' own subject.
  const drain =
    eventLogFromEnvironment(options.config) && services.requests.records.log !== undefined
      ? drainer(services)
      : async () => {};
  const inject = async (request: InjectOptions): Promise<LightMyRequestResponse> => {
    const response = await app.inject(request);
    await drain();
    return response;
  };
  const admin: TestGateway['admin'] = async (method, url, body) => {
    const response = await inject({
      method,
      url,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      ...(body === undefined ? {} : { payload: body as object }),
    });
    if (response.statusCode >= 300)
      throw new Error(`admin ${method} ${url} -> ${response.statusCode} ${response.body}`);
    return response.json();
  };
  const newKey: TestGateway['newKey'] = async (accountId, keyOptions = {}) => {
    const created = await admin('POST', `/admin/v1/accounts/${accountId}/keys`, {
      kind: 'personal',
      ...keyOptions,
    });
    return { key: String(created['key']), keyId: String(created['id']) };
  };
  return {
    app,
    services,
    admin,
    newKey,
    async account(balance, keyOptions) {
      const account = await admin('POST', '/admin/v1/accounts', {
        email: `${randomUUID()}@example.test`,
      });
      const accountId = String(account['id']);
      if (balance > 0)
        await admin('POST', `/admin/v1/accounts/${accountId}/topups`, {
          amount: balance,
          reference: randomUUID(),
        });
      return { accountId, ...(await newKey(accountId, keyOptions)) };
    },
    async balance(accountId) {
      const account = await services.accounts.get(accountId);
      return { balance: account.balance, held: account.held, available: account.available };
    },
    call(method, url, callOptions = {}) {
      const headers: Record<string, string> = { ...callOptions.headers };
      if (callOptions.key !== undefined) headers['authorization'] = `Bearer ${callOptions.key}`;
      const idempotencyKey =
        callOptions.idempotencyKey === undefined ? randomUUID() : callOptions.idempotencyKey;
      if (method === 'POST' && idempotencyKey !== null) headers['idempotency-key'] = idempotencyKey;
      return inject({
        method,
        url,
        headers,
        ...(callOptions.body === undefined ? {} : { payload: callOptions.body as object }),
      });
    },
    upload(key, body, type, headers = {}) {
      return inject({
        method: 'POST',
        url: '/v1/assets',
        headers: {
          authorization: `Bearer ${key}`,
          'idempotency-key': randomUUID(),
          'content-type': type,
          ...headers,
        },
        payload: body,
      });
    },
    async listen() {
      const address = await app.listen({ port: 0, host: '127.0.0.1' });
      return `${address}/v1`;
    },
    async expectLedgerClean() {
      const report = await checkLedger(services.store.db);
      expect(report.violations).toEqual([]);
    },
    async close() {
      await app.close();
      await services.close();
      await dropSchema(database.postgresSchema);
      rmSync(assetsDir, { recursive: true, force: true });
    },
  };
}

/** The body of an error response without its per-request id, for "identical to a missing id" checks. */
export function errorWithoutRequestId(response: LightMyRequestResponse): unknown {
  const body = response.json<{ error: Record<string, unknown> }>();
  const { request_id: _requestId, ...rest } = body.error;
  return { status: response.statusCode, error: rest };
}
