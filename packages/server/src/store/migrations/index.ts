import type { Migration, MigrationProvider } from 'kysely';
import * as initial from './001-initial.js';
import * as chat from './002-chat.js';
import * as assets from './003-assets.js';

/**
 * Versioned migrations, applied in name order at start. Never edit a released migration: add
 * the next one.
 */
const migrations: Record<string, Migration> = {
  '001-initial': initial,
  '002-chat': chat,
  '003-assets': assets,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: () => Promise.resolve(migrations),
};
