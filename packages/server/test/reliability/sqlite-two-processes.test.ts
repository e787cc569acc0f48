import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import {
  oneMicroYuanEmbeddingsConfig,
  startGateway,
  type TestGateway,
} from '../helpers/gateway.js';

const run = promisify(execFile);
const bin = new URL('../../bin/tollgate.mjs', import.meta.url).pathname;

/**
 * The embedded default is one SQLite file that the gateway and the operator's CLI (another
 * process) write at the same time. The gateway commits in groups (store/sqlite-group-commit.ts):
 * its shared transaction must neither lose the CLI's writes nor make the CLI fail, and the CLI
 * must not make accounted requests fail or be billed wrongly. Every request here costs exactly 1.
 */
const config = oneMicroYuanEmbeddingsConfig();

describe('one SQLite file, two processes', () => {
  let gateway: TestGateway | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('serves accounted requests while the CLI tops up the same account, and loses nothing', async () => {
    if (!existsSync(new URL('../../dist/cli/main.js', import.meta.url)))
      throw new Error('build first: npm test builds dist/');
    dir = mkdtempSync(path.join(tmpdir(), 'tollgate-two-processes-'));
    const file = path.join(dir, 'tollgate.db');
    gateway = await startGateway(
      { name: 'sqlite', fresh: () => ({ databaseUrl: file }) },
      { config },
    );
    const { accountId, key } = await gateway.account(100_000);
    const client = gateway;
    const env = { ...process.env, TOLLGATE_DATA_DIR: dir, TOLLGATE_DATABASE_URL: `sqlite:${file}` };
    const topUps = (async () => {
      const balances: number[] = [];
      for (let index = 0; index < 4; index += 1) {
        const { stdout } = await run(
          process.execPath,
          [bin, 'topup', accountId, '--amount', '1000', '--reference', `wire-${index}`],
          { env, timeout: 30_000 },
        );
        balances.push(Number((JSON.parse(stdout) as { balance: number }).balance));
      }
      return balances;
    })();
    // Requests keep arriving for as long as the CLI processes run.
    let sent = 0;
    const statuses: number[] = [];
    let cliDone = false;
    void topUps.finally(() => (cliDone = true));
    while (!cliDone || sent < 200) {
      const batch = await Promise.all(
        Array.from({ length: 20 }, (_, index) =>
          client.call('POST', '/v1/embeddings', {
            key,
            body: { model: 'sim-embed', input: `request ${sent + index}` },
          }),
        ),
      );
      sent += batch.length;
      statuses.push(...batch.map((response) => response.statusCode));
    }
    const cliBalances = await topUps;
    expect(statuses.every((status) => status === 200)).toBe(true);
    expect(cliBalances).toHaveLength(4);
    // 100,000 + 4 × 1,000 credited, one micro-yuan per request captured, nothing left held.
    expect(await gateway.balance(accountId)).toEqual({
      balance: 104_000 - sent,
      held: 0,
      available: 104_000 - sent,
    });
  }, 120_000);
});
