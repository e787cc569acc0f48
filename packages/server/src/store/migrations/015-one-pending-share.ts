import { sql, type Kysely } from 'kysely';

/**
 * One pending share per asset and key (docs/shares.md, "Asking again"): a unique index on
 * `(key_id, asset_id)` over `pending_review` rows only, so a repeat can never queue a second
 * review of the same asset, however many requests race. Shares queued twice before this
 * migration keep their oldest; the later ones are revoked, journalled with the reason, since the
 * index cannot be built over them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const base = db as unknown as Kysely<PendingShares>;
  const pending = await base
    .selectFrom('shares')
    .select(['id', 'key_id', 'asset_id'])
    .where('state', '=', 'pending_review')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  const kept = new Set<string>();
  const now = Date.now();
  for (const share of pending) {
    const pair = `${share.key_id}\u0000${share.asset_id}`;
    if (!kept.has(pair)) {
      kept.add(pair);
      continue;
    }
    const reason =
      'a second pending share of the same asset and key: merged into the first by migration 015';
    await base
      .updateTable('shares')
      .set({ state: 'revoked', decided_at: now, decision_reason: reason, updated_at: now })
      .where('id', '=', share.id)
      .execute();
    const { count } = await base
      .selectFrom('share_events')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('share_id', '=', share.id)
      .executeTakeFirstOrThrow();
    await base
      .insertInto('share_events')
      .values({
        id: `shev_015_${share.id}`,
        share_id: share.id,
        sequence: Number(count),
        at: now,
        actor: 'operator',
        action: 'revoked',
        reason,
      })
      .execute();
  }
  await db.schema
    .createIndex('shares_one_pending')
    .on('shares')
    .columns(['key_id', 'asset_id'])
    .unique()
    .where(sql.ref('state'), '=', 'pending_review')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('shares_one_pending').execute();
}

/** The columns this migration reads and writes, as they are at 015. */
interface PendingShares {
  shares: {
    id: string;
    key_id: string;
    asset_id: string;
    state: string;
    created_at: number;
    decided_at: number | null;
    decision_reason: string | null;
    updated_at: number;
  };
  share_events: {
    id: string;
    share_id: string;
    sequence: number;
    at: number;
    actor: string;
    action: string;
    reason: string | null;
  };
}
