import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { dropSchema, type TestDialect } from './dialects.js';

/**
 * One database for several instances (a file for SQLite, one schema for PostgreSQL), as
 * instances behind one load balancer share it; `remove` deletes it.
 */
export function sharedDatabase(dialect: TestDialect): {
  readonly services: { databaseUrl: string; postgresSchema?: string };
  readonly remove: () => Promise<void>;
} {
  if (dialect.name === 'sqlite') {
    const folder = mkdtempSync(path.join(tmpdir(), 'tollgate-shared-'));
    return {
      services: { databaseUrl: path.join(folder, 'tollgate.db') },
      remove: async () => rmSync(folder, { recursive: true, force: true }),
    };
  }
  const schema = `t_${randomBytes(6).toString('hex')}`;
  return {
    services: { databaseUrl: dialect.fresh().databaseUrl, postgresSchema: schema },
    remove: () => dropSchema(schema),
  };
}
