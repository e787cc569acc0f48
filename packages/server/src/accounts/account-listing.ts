import type { Account } from '@tollgate/protocol';
import { sql, type Kysely } from 'kysely';
import { z } from 'zod';
import { parseInput, type Unparsed } from '../errors/input-schema.js';
import type { Database } from '../store/schema.js';
import { afterCursor, listPage, parseLimit, type ListPage } from '../util/list-page.js';
import { accountView, type BudgetClock } from './account-service.js';

const MAX_FILTER_LENGTH = 254;
const NOT_A_FILTER = `must be a string of 1 to ${MAX_FILTER_LENGTH} characters`;
const filterText = z
  .string({ error: NOT_A_FILTER })
  .min(1, { error: NOT_A_FILTER })
  .max(MAX_FILTER_LENGTH, { error: NOT_A_FILTER });

/** The accounts' filters; the page (`limit`, `after`) is the listing's own (util/list-page.ts). */
const accountFilter = z.object({ q: filterText.optional(), id_prefix: filterText.optional() });

/** What an operator may filter accounts by; each field as it came (query string or CLI option). */
export type AccountQuery = Unparsed<typeof accountFilter> & {
  readonly limit?: unknown;
  readonly after?: unknown;
};

export type AccountPage = ListPage<Account>;

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
    const { q, id_prefix: idPrefix } = parseInput(accountFilter, query);
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

function likeEscaped(text: string): string {
  return text.replace(/[\\%_]/g, (character) => `\\${character}`);
}
