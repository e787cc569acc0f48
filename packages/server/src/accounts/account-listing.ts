import type { Account } from '@tollgate/protocol';
import { sql, type Kysely } from 'kysely';
import { invalidInput } from '../errors/api-error.js';
import type { Database } from '../store/schema.js';
import { afterCursor, listPage, parseLimit, type ListPage } from '../util/list-page.js';
import { accountView, type BudgetClock } from './account-service.js';

/** What an operator may filter accounts by; each field as it came (query string or CLI option). */
export interface AccountQuery {
  readonly q?: unknown;
  readonly id_prefix?: unknown;
  readonly limit?: unknown;
  readonly after?: unknown;
}

export type AccountPage = ListPage<Account>;

const MAX_FILTER_LENGTH = 254;

/**
 * Operators finding accounts (`GET /admin/v1/accounts`, `tollgate accounts list`): newest first,
 * `q` a case-insensitive substring of the email (accounts have no other name), `id_prefix` the
 * start of the id, `limit` 1–100 (default 20), `after` the id of the last account of the page
 * before. One rule for both callers, so the CLI and the API answer the same list.
 */
export class AccountListing {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly at: BudgetClock,
  ) {}

  async list(query: AccountQuery): Promise<AccountPage> {
    const q = optionalFilter(query.q, 'q');
    const idPrefix = optionalFilter(query.id_prefix, 'id_prefix');
    const limit = parseLimit(query.limit, 20);
    let select = this.db.selectFrom('accounts').selectAll();
    // Emails are stored lower-cased, so a lower-cased needle matches whatever case was typed;
    // LIKE's own wildcards in it are escaped so `_` and `%` match themselves.
    if (q !== undefined)
      select = select.where(
        sql<boolean>`email like ${`%${likeEscaped(q.toLowerCase())}%`} escape '\\'`,
      );
    // Ids are case-sensitive (base62): compare the prefix exactly, in both dialects.
    if (idPrefix !== undefined)
      select = select.where(sql<boolean>`substr(id, 1, ${idPrefix.length}) = ${idPrefix}`);
    const after = await afterCursor(this.db, 'accounts', query.after, 'is not an account id');
    if (after !== undefined) select = select.where(after);
    const rows = await select
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit + 1)
      .execute();
    return listPage(rows, limit, (row) => accountView(row, this.at));
  }
}

function optionalFilter(value: unknown, field: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length < 1 || value.length > MAX_FILTER_LENGTH)
    throw invalidInput(field, `must be a string of 1 to ${MAX_FILTER_LENGTH} characters`);
  return value;
}

function likeEscaped(text: string): string {
  return text.replace(/[\\%_]/g, (character) => `\\${character}`);
}
