import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.js';
import type { Clock } from '../util/effects.js';

/**
 * Channels an operator disabled, kept in the database so that every instance and the CLI agree
 * (docs/routing.md, "Disabling a channel"). Disabling twice keeps the first row; enabling a
 * channel that is not disabled changes nothing.
 */
export class DisabledChannels {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  async list(): Promise<Map<string, { reason: string | null; disabledAt: number }>> {
    const rows = await this.db.selectFrom('disabled_channels').selectAll().execute();
    return new Map(
      rows.map((row) => [
        row.channel_id,
        { reason: row.reason, disabledAt: Number(row.disabled_at) },
      ]),
    );
  }

  async disable(channelId: string, reason: string | null): Promise<void> {
    await this.db
      .insertInto('disabled_channels')
      .values({ channel_id: channelId, reason, disabled_at: this.clock.now() })
      .onConflict((conflict) => conflict.column('channel_id').doNothing())
      .execute();
  }

  async enable(channelId: string): Promise<void> {
    await this.db.deleteFrom('disabled_channels').where('channel_id', '=', channelId).execute();
  }
}
