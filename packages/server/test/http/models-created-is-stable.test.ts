import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { describeEachDialect, dropSchema } from '../helpers/dialects.js';
import { manualClock, startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * `GET /v1/models` gave `created` as each process's start time: two instances behind one load
 * balancer answered different values for the same model, and every restart changed it. It is
 * now when the model was first priced in the shared database.
 */
describeEachDialect('the created time of a model on $name', (dialect) => {
  const gateways: TestGateway[] = [];
  let cleanup = async () => {};
  afterEach(async () => {
    for (const gateway of gateways.splice(0)) await gateway.close();
    await cleanup();
  });

  it('is the same on an instance started later on the same database', async () => {
    // One database for both instances: a file for SQLite, one schema for PostgreSQL.
    const shared =
      dialect.name === 'sqlite'
        ? (() => {
            const folder = mkdtempSync(path.join(tmpdir(), 'tollgate-created-'));
            cleanup = async () => rmSync(folder, { recursive: true, force: true });
            return { databaseUrl: path.join(folder, 'tollgate.db') };
          })()
        : (() => {
            const schema = `t_${randomBytes(6).toString('hex')}`;
            cleanup = () => dropSchema(schema);
            return { databaseUrl: dialect.fresh().databaseUrl, postgresSchema: schema };
          })();
    const clock = manualClock();
    const first = await startGateway(dialect, { clock, services: shared });
    gateways.push(first);
    const { key } = await first.account(0);
    const createdBy = async (gateway: TestGateway) => {
      const response = await gateway.call('GET', '/v1/models', { key });
      expect(response.statusCode).toBe(200);
      const models = response.json<{ data: { id: string; created: number }[] }>().data;
      return Object.fromEntries(models.map((model) => [model.id, model.created]));
    };
    const before = await createdBy(first);
    clock.advance(86_400_000);
    const later = await startGateway(dialect, { clock, services: shared });
    gateways.push(later);
    expect(await createdBy(later)).toEqual(before);
    expect(
      Object.values(before).every(
        (created) => created === Math.floor(Date.parse('2026-11-23T00:00:00Z') / 1000),
      ),
    ).toBe(true);
  });
});
