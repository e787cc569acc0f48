import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { dialects } from '../../../server/test/helpers/dialects.js';
import {
  startGateway,
  testConfig,
  type TestGateway,
} from '../../../server/test/helpers/gateway.js';
import type { ConfigFile } from '../../../server/src/config/schema.js';
import { Tollgate, type TollgateOptions } from '../../src/index.js';

export { dialects, testConfig };
export type { TestGateway };

/** A gateway on a real loopback port, with its task worker running, and its `/v1` base URL. */
export async function liveGateway(
  config?: ConfigFile,
): Promise<{ gateway: TestGateway; baseURL: string }> {
  const gateway = await startGateway(dialects[0] as (typeof dialects)[number], {
    ...(config === undefined ? {} : { config }),
    services: { worker: { intervalMs: 50 } },
  });
  const baseURL = await gateway.listen();
  gateway.services.taskWorker.start();
  return { gateway, baseURL };
}

/** An SDK client for `key` on `baseURL`. */
export function clientFor(
  baseURL: string,
  key: string,
  options: Partial<TollgateOptions> = {},
): Tollgate {
  return new Tollgate({ baseURL, apiKey: key, ...options });
}

/** Rows in a table of the gateway's database. */
export async function countRows(
  gateway: TestGateway,
  table: 'tasks' | 'holds' | 'requests',
): Promise<number> {
  const row = await gateway.services.store.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** A fresh directory for journal files; `remove` deletes it. */
export function tempDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'tollgate-sdk-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Waits until `check` holds (polling), or fails after `timeoutMs`. */
export async function eventually(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
