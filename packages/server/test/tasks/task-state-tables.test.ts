import { afterEach, expect, it } from 'vitest';
import type { TaskBillingState, TaskStatus, TaskSubmission } from '../../src/store/schema.js';
import {
  BILLING_MOVES,
  SUBMISSION_MOVES,
  TASK_MOVES,
  type StateColumn,
} from '../../src/tasks/task-states.js';
import { ForbiddenTaskMove } from '../../src/tasks/task-store.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import type { TaskBody } from '../helpers/tasks.js';

/**
 * Issue 18, Found 6 / Deliver 2: each state column of a task has one transition table, enforced
 * by the store's one guarded `move`. For every column and every pair of its states, only the
 * listed moves succeed; any other is refused (a bug, `ForbiddenTaskMove`) and changes nothing.
 * The rows are set up directly (a store test: no worker runs, and no money moves).
 */
describeEachDialect('the state tables of a task on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });

  const tables: { column: StateColumn; table: Readonly<Record<string, readonly string[]>> }[] = [
    { column: 'status', table: TASK_MOVES },
    { column: 'submission', table: SUBMISSION_MOVES },
    { column: 'billing_state', table: BILLING_MOVES },
  ];

  it('for status, submission and billing_state, exactly the listed moves succeed', async () => {
    gateway = await startGateway(dialect);
    const client = gateway;
    const { key } = await client.account(100_000_000);
    const created = await client.call('POST', '/v1/videos', {
      key,
      body: { model: 'sim-video', prompt: 'a table', seconds: 1, size: '320x240' },
    });
    expect(created.statusCode, created.body).toBe(202);
    const id = created.json<TaskBody>().id;
    const db = client.services.store.db;
    const store = client.services.taskStore;
    let checked = 0;
    for (const { column, table } of tables) {
      const states = Object.keys(table);
      for (const from of states)
        for (const to of states) {
          if (from === to) continue;
          await db
            .updateTable('tasks')
            .set({ [column]: from })
            .where('id', '=', id)
            .execute();
          const pair = { from, to };
          const move = {
            id,
            now: 1,
            ...(column === 'status'
              ? { status: pair as { from: TaskStatus; to: TaskStatus } }
              : {}),
            ...(column === 'submission'
              ? { submission: pair as { from: TaskSubmission; to: TaskSubmission } }
              : {}),
            ...(column === 'billing_state'
              ? { billing_state: pair as { from: TaskBillingState; to: TaskBillingState } }
              : {}),
          };
          const listed = table[from]?.includes(to) ?? false;
          if (listed)
            await expect(store.move(db, move), `${column} ${from} -> ${to}`).resolves.toBe(true);
          else
            await expect(store.move(db, move), `${column} ${from} -> ${to}`).rejects.toBeInstanceOf(
              ForbiddenTaskMove,
            );
          const row = await store.byId(id);
          expect(row?.[column], `${column} after ${from} -> ${to}`).toBe(listed ? to : from);
          checked += 1;
        }
    }
    // Every ordered pair of distinct states of the three columns: 5·4 + 3·2 + 5·4.
    expect(checked).toBe(46);
  });

  it('each table lists exactly the moves docs/tasks.md documents, none that no code makes', () => {
    // The enumeration above proves the store enforces the tables; this pins the tables to
    // docs/tasks.md "States". An extra move (submission_unknown -> succeeded was listed, made by
    // no code) is one more way a bug could write a state nobody meant.
    const pairs = (table: Readonly<Record<string, readonly string[]>>) =>
      Object.entries(table).flatMap(([from, tos]) => tos.map((to) => `${from} -> ${to}`));
    expect(pairs(TASK_MOVES).sort()).toEqual(
      [
        'queued -> running',
        'queued -> succeeded',
        'queued -> failed',
        'queued -> submission_unknown',
        'submission_unknown -> running',
        'submission_unknown -> failed',
        'running -> succeeded',
        'running -> failed',
        'running -> submission_unknown',
      ].sort(),
    );
    expect(pairs(SUBMISSION_MOVES).sort()).toEqual(['pending -> sending', 'sending -> accepted']);
    expect(pairs(BILLING_MOVES).sort()).toEqual(
      [
        'reserved -> pending',
        'reserved -> released',
        'pending -> settled',
        'pending -> expired',
      ].sort(),
    );
  });

  it('a move is refused when any named column is not as expected (a compare-and-set)', async () => {
    gateway = await startGateway(dialect);
    const client = gateway;
    const { key } = await client.account(100_000_000);
    const created = await client.call('POST', '/v1/videos', {
      key,
      body: { model: 'sim-video', prompt: 'a guard', seconds: 1, size: '320x240' },
    });
    const id = created.json<TaskBody>().id;
    const store = client.services.taskStore;
    const db = client.services.store.db;
    // The task is queued, pending, reserved: a move expecting `sending` does nothing.
    expect(
      await store.move(db, {
        id,
        now: 1,
        status: { from: 'queued', to: 'running' },
        submission: { from: 'sending', to: 'accepted' },
      }),
    ).toBe(false);
    expect(await store.byId(id)).toMatchObject({ status: 'queued', submission: 'pending' });
    // Under a claim that is not the task's: nothing either.
    expect(
      await store.move(db, {
        id,
        now: 1,
        claim: 'claim_not_this_one',
        submission: { from: 'pending', to: 'sending' },
      }),
    ).toBe(false);
    expect((await store.byId(id))?.submission).toBe('pending');
  });
});
