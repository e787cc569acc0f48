import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import { openStore } from '../../src/store/database.js';
import { describeOnPostgres, dropSchema } from '../helpers/dialects.js';

/**
 * Several instances started at once on a schema that does not exist yet: each runs
 * `create schema if not exists`, and PostgreSQL's catalog can still answer the losers with a
 * unique violation on pg_namespace. Every instance must start (the migrations themselves are
 * locked and run once).
 */
describeOnPostgres('instances started together on a new schema on $name', (dialect) => {
  it('all open the same new schema, none fails on the race to create it', async () => {
    const { databaseUrl } = dialect.fresh();
    for (let round = 0; round < 4; round += 1) {
      const schema = `t_${randomBytes(6).toString('hex')}`;
      try {
        const opened = await Promise.allSettled(
          Array.from({ length: 6 }, () => openStore({ url: databaseUrl, postgresSchema: schema })),
        );
        const failures = opened.filter((result) => result.status === 'rejected');
        for (const result of opened) if (result.status === 'fulfilled') await result.value.close();
        expect(failures.map((failure) => String(failure.reason))).toEqual([]);
      } finally {
        await dropSchema(schema);
      }
    }
  }, 120_000);
});
