import type { Kysely, KyselyPlugin } from 'kysely';
import { afterEach, expect, it } from 'vitest';
import { Conversations } from '../../src/chat/conversations.js';
import type { Database } from '../../src/store/schema.js';
import { describeOnPostgres, openTestStore } from '../helpers/dialects.js';

/**
 * The risk: a conversation's turn ends (`endTurn`, which runs after its answer was sent) while the
 * next turn is starting, between that start's statements. The client saw the answer and sent the
 * next turn at once, as it should; it must start, not get CONVERSATION_PENDING for a turn that is
 * over (seen once in CI under load: the next turn read the conversation after its claim failed).
 * On PostgreSQL, where the ending turn's write runs on a connection of its own between the
 * start's statements; SQLite's one writer would wait for the start's own write to commit.
 */
describeOnPostgres(
  'a conversation turn starting while the previous one ends, on $name',
  (dialect) => {
    let close: (() => Promise<void>) | undefined;
    afterEach(async () => {
      await close?.();
      close = undefined;
    });

    /** The conversations service on a database that runs `meanwhile` once, after its first update. */
    async function setUp(meanwhile: (db: Kysely<Database>) => Promise<unknown>) {
      const opened = await openTestStore(dialect);
      close = opened.close;
      const { db } = opened.store;
      let ran = false;
      const updates = new WeakSet<object>();
      const plugin: KyselyPlugin = {
        transformQuery: ({ node, queryId }) => {
          if (node.kind === 'UpdateQueryNode') updates.add(queryId);
          return node;
        },
        transformResult: async ({ result, queryId }) => {
          if (!ran && updates.has(queryId)) {
            ran = true;
            await meanwhile(db);
          }
          return result;
        },
      };
      const now = Date.now();
      const conversations = new Conversations(db.withPlugin(plugin), { now: () => now }, 60_000);
      await db
        .insertInto('conversations')
        .values({
          id: 'conv-1',
          key_id: 'key-1',
          pending_request_id: 'req-previous',
          created_at: now,
          updated_at: now,
        })
        .execute();
      return { db, conversations };
    }

    const pendingOf = async (db: Kysely<Database>) =>
      (
        await db
          .selectFrom('conversations')
          .select('pending_request_id')
          .where('id', '=', 'conv-1')
          .executeTakeFirstOrThrow()
      ).pending_request_id;

    it('starts the next turn when the previous one ends between the start’s claim and its read', async () => {
      const { db, conversations } = await setUp((db) =>
        db
          .updateTable('conversations')
          .set({ pending_request_id: null })
          .where('pending_request_id', '=', 'req-previous')
          .execute(),
      );
      await conversations.beginTurn('conv-1', 'key-1', 'req-next');
      expect(await pendingOf(db)).toBe('req-next');
    });

    it('still refuses the next turn while the previous one runs (a recent turn, no record yet)', async () => {
      const { db, conversations } = await setUp(async () => {});
      await expect(conversations.beginTurn('conv-1', 'key-1', 'req-next')).rejects.toMatchObject({
        code: 'CONVERSATION_PENDING',
      });
      expect(await pendingOf(db)).toBe('req-previous');
    });

    it('refuses another key’s turn, whatever the turn in flight does meanwhile', async () => {
      const { db, conversations } = await setUp((db) =>
        db.updateTable('conversations').set({ pending_request_id: null }).execute(),
      );
      await expect(conversations.beginTurn('conv-1', 'key-2', 'req-other')).rejects.toMatchObject({
        code: 'CONVERSATION_KEY_MISMATCH',
      });
      expect(await pendingOf(db)).toBe(null);
    });
  },
);
