import type { Migration, MigrationProvider } from 'kysely';
import * as initial from './001-initial.js';

/**
 * Versioned migrations, applied in name order at start. Never edit a released migration: add
 * the next one.
 */
const migrations: Record<string, Migration> = {
  '001-initial': initial,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: () => Promise.resolve(migrations),
};
