import type { ConsoleSessionTable, ConsoleUserTable } from '../store/schema.js';

/** Who is signed in, after the cookie was checked. */
export interface ConsoleIdentity {
  readonly user: ConsoleUserTable;
  readonly session: ConsoleSessionTable;
  /** The cookie's token (for the CSRF token, derived from it). */
  readonly token: string;
}
