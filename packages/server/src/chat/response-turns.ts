import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.js';
import type { Clock } from '../util/effects.js';

/** A stored Responses turn: its input conversation and what its response repeats of its request. */
export interface StoredTurn {
  readonly items: unknown[];
  readonly echo: unknown;
}

/**
 * The conversation state of stored Responses turns (docs/agents.md, "State Tollgate keeps"),
 * readable by the key that made them only. A turn's output is not kept here: it is its request
 * record's answer, so the two can never disagree.
 */
export class ResponseTurns {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  /** Keeps a turn; a replay of the same request keeps the first. */
  async keep(requestId: string, keyId: string, turn: StoredTurn): Promise<void> {
    await this.db
      .insertInto('response_turns')
      .values({
        id: requestId,
        key_id: keyId,
        items: JSON.stringify(turn.items),
        echo: JSON.stringify(turn.echo),
        created_at: this.clock.now(),
      })
      .onConflict((conflict) => conflict.column('id').doNothing())
      .execute();
  }

  /** A stored turn; `undefined` when missing, not stored (`store: false`), or another key's. */
  async read(requestId: string, keyId: string): Promise<StoredTurn | undefined> {
    const row = await this.db
      .selectFrom('response_turns')
      .select(['items', 'echo'])
      .where('id', '=', requestId)
      .where('key_id', '=', keyId)
      .executeTakeFirst();
    return row === undefined
      ? undefined
      : { items: JSON.parse(row.items) as unknown[], echo: JSON.parse(row.echo) as unknown };
  }
}
