import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, ShareEventTable, ShareState, ShareTable } from '../store/schema.js';
import { canMove, ForbiddenShareMove } from './share-states.js';

export type ShareRow = Selectable<ShareTable>;
export type ShareEventRow = Selectable<ShareEventTable>;

/** A share with what it serves: its asset's content address and whether it is still there. */
export type SharedRow = ShareRow & {
  readonly sha256: string;
  readonly media_type: string;
  readonly bytes: number;
  readonly asset_created_at: number;
  readonly asset_deleted_at: number | null;
  readonly asset_delivered_at: number | null;
};

/** A page of shares in a stable order, continued after the share `after`. */
export interface SharePage {
  readonly limit: number;
  readonly after: ShareRow | undefined;
}

/**
 * Share rows and their journal. Every state change is `transition`: a compare-and-set on the
 * state the caller read, refused for a move share-states.ts does not list, written together with
 * its journal row (the caller runs both in one transaction).
 */
export class ShareStore {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Inserts a share with its first journal row; `false` (nothing written) when the key already
   * has a pending share of this asset (the unique index of migration 015).
   */
  async insert(
    executor: Kysely<Database>,
    row: ShareTable,
    event: Omit<ShareEventTable, 'sequence'>,
  ): Promise<boolean> {
    const inserted = await executor
      .insertInto('shares')
      .values(row)
      .onConflict((conflict) =>
        conflict
          .columns(['key_id', 'asset_id'])
          // A literal, as in the index: SQLite matches a partial index's WHERE by its text.
          .where('state', '=', sql.lit('pending_review'))
          .doNothing(),
      )
      .executeTakeFirst();
    if (inserted.numInsertedOrUpdatedRows !== 1n) return false;
    await executor
      .insertInto('share_events')
      .values({ ...event, sequence: 0 })
      .execute();
    return true;
  }

  /** The share of `assetId` this key has awaiting review, if any (at most one: migration 015). */
  async pendingOf(
    executor: Kysely<Database>,
    keyId: string,
    assetId: string,
  ): Promise<SharedRow | undefined> {
    return this.withAsset(executor)
      .where('shares.key_id', '=', keyId)
      .where('shares.asset_id', '=', assetId)
      .where('shares.state', '=', 'pending_review')
      .executeTakeFirst();
  }

  /** How many shares of the account await review, all its keys together. */
  async pendingCount(executor: Kysely<Database>, accountId: string): Promise<number> {
    const { count } = await executor
      .selectFrom('shares')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('account_id', '=', accountId)
      .where('state', '=', 'pending_review')
      .executeTakeFirstOrThrow();
    return Number(count);
  }

  byId(id: string, executor: Kysely<Database> = this.db): Promise<SharedRow | undefined> {
    return this.withAsset(executor).where('shares.id', '=', id).executeTakeFirst();
  }

  /** The share a public token names, found by the token's hash (never by the token). */
  byTokenHash(tokenHash: string): Promise<SharedRow | undefined> {
    return this.withAsset(this.db).where('shares.token_hash', '=', tokenHash).executeTakeFirst();
  }

  private withAsset(executor: Kysely<Database>) {
    return executor
      .selectFrom('shares')
      .innerJoin('assets', 'assets.id', 'shares.asset_id')
      .selectAll('shares')
      .select([
        'assets.sha256',
        'assets.media_type',
        'assets.bytes',
        'assets.created_at as asset_created_at',
        'assets.deleted_at as asset_deleted_at',
        'assets.delivered_at as asset_delivered_at',
      ]);
  }

  /**
   * Moves `id` from `from` to `to` and journals the event, only if it is still in `from`.
   * Returns whether it moved (false: someone else moved it first; nothing was written).
   */
  async transition(
    executor: Kysely<Database>,
    move: { id: string; from: ShareState; to: ShareState; now: number },
    event: Omit<ShareEventTable, 'sequence'>,
  ): Promise<boolean> {
    if (!canMove(move.from, move.to)) throw new ForbiddenShareMove(move.from, move.to);
    const result = await executor
      .updateTable('shares')
      .set({
        state: move.to,
        decided_at: move.now,
        decision_reason: event.reason,
        updated_at: move.now,
      })
      .where('id', '=', move.id)
      .where('state', '=', move.from)
      .executeTakeFirst();
    if (result.numUpdatedRows !== 1n) return false;
    // The row is ours until commit (the update locked it), so no other event of this share can
    // be written meanwhile: counting gives the next place in the journal.
    const { count } = await executor
      .selectFrom('share_events')
      .select((eb) => eb.fn.countAll<number | string>().as('count'))
      .where('share_id', '=', move.id)
      .executeTakeFirstOrThrow();
    await executor
      .insertInto('share_events')
      .values({ ...event, sequence: Number(count) })
      .execute();
    return true;
  }

  /** One key's shares, newest first. */
  listForKey(keyId: string, page: SharePage): Promise<SharedRow[]> {
    return this.newestFirst('shares.key_id', keyId, page);
  }

  /** One account's shares (every key's and console user's), newest first: the console's list. */
  listForAccount(accountId: string, page: SharePage): Promise<SharedRow[]> {
    return this.newestFirst('shares.account_id', accountId, page);
  }

  private newestFirst(
    owner: 'shares.key_id' | 'shares.account_id',
    id: string,
    page: SharePage,
  ): Promise<SharedRow[]> {
    let query = this.withAsset(this.db).where(owner, '=', id);
    const after = page.after;
    if (after !== undefined)
      query = query.where((eb) =>
        eb.or([
          eb('shares.created_at', '<', after.created_at),
          eb.and([eb('shares.created_at', '=', after.created_at), eb('shares.id', '<', after.id)]),
        ]),
      );
    return query
      .orderBy('shares.created_at', 'desc')
      .orderBy('shares.id', 'desc')
      .limit(page.limit)
      .execute();
  }

  /** Every account's shares for operators, oldest first (a review queue), optionally in one state. */
  listForReview(state: ShareState | undefined, page: SharePage): Promise<SharedRow[]> {
    let query = this.withAsset(this.db);
    if (state !== undefined) query = query.where('shares.state', '=', state);
    const after = page.after;
    if (after !== undefined)
      query = query.where((eb) =>
        eb.or([
          eb('shares.created_at', '>', after.created_at),
          eb.and([eb('shares.created_at', '=', after.created_at), eb('shares.id', '>', after.id)]),
        ]),
      );
    return query
      .orderBy('shares.created_at', 'asc')
      .orderBy('shares.id', 'asc')
      .limit(page.limit)
      .execute();
  }

  /** A share's journal, oldest first. */
  events(shareId: string): Promise<ShareEventRow[]> {
    return this.db
      .selectFrom('share_events')
      .selectAll()
      .where('share_id', '=', shareId)
      .orderBy('sequence', 'asc')
      .execute();
  }
}
