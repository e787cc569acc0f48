import { SETTLE_CONFIRMATION, type Task } from '@tollgate/protocol';
import { afterEach, expect, it } from 'vitest';
import { z } from 'zod';
import type { ProviderTaskInput, TaskProvider } from '../../src/providers/task-provider.js';
import type { RequestIdentity } from '../../src/requests/request-service.js';
import type { TaskKind } from '../../src/store/schema.js';
import type { TaskFamily } from '../../src/tasks/task-family.js';
import { newTaskRow } from '../../src/tasks/task-row.js';
import type { TaskRow } from '../../src/tasks/task-store.js';
import { taskBillingOf, taskQuoteOf, taskSettlementOf } from '../../src/tasks/task-view.js';
import { describeEachDialect } from '../helpers/dialects.js';
import type { TestGateway } from '../helpers/gateway.js';
import { startTaskGateway, workUntil } from '../helpers/tasks.js';

const BALANCE = 100_000_000;
/** What the test family holds per task, and what it charges per word echoed. */
const QUOTED = 5_000;
const PER_WORD = 1_000;

/**
 * A task family the server does not know: "echo" (kind `echo`), registered only here. Its
 * input is a list of words; its upstream (a fake provider) accepts the task, then answers with
 * how many words it echoed; it charges per word. If the kernel needed to know its families,
 * this family could not be created, sent, polled, priced, shown, settled and journalled
 * without a change to src/tasks — this test proves it can.
 */
const echoInputSchema = z.strictObject({ words: z.array(z.string().min(1)).min(1) });
type EchoInput = z.infer<typeof echoInputSchema>;

function echoFamily(provider: TaskProvider): TaskFamily<EchoInput> {
  const path = (id: string) => `/v1/echo/${id}`;
  return {
    kind: 'echo',
    attachable: true,
    path,
    parseInput: (stored) => echoInputSchema.parse(stored),
    provider: () => provider,
    // The provider input is a video-shaped one: the fake provider reads only the prompt.
    upstreamInput: async (_deps, _task, input) => ({
      kind: 'video',
      upstreamModel: 'echo-upstream',
      prompt: input.words.join(' '),
      size: '1x1',
      n: 1,
      quality: undefined,
      seconds: undefined,
      generateAudio: false,
      references: [],
    }),
    outputRules: () => ({ maxBytes: 0, mediaTypes: [] }),
    deliveredReport: (report) => report,
    priceDelivery: (_prices, input, report) => {
      const words = Math.min(report.secondsDelivered, input.words.length);
      return {
        amount: words * PER_WORD,
        lineItems: [
          {
            name: 'input_token',
            quantity: words,
            unit_price: PER_WORD,
            amount: words * PER_WORD,
            detail: 'words echoed',
          },
        ],
        rule: `${words} words echoed at ${PER_WORD} micro-yuan`,
        reportExceededRequest: report.secondsDelivered > input.words.length,
      };
    },
    priceBilledFailure: () => ({
      amount: 0,
      lineItems: [],
      rule: 'nothing',
      reportExceededRequest: false,
    }),
    view: (row: TaskRow) =>
      ({
        object: 'echo.task',
        id: row.id,
        status: row.status,
        quote: taskQuoteOf(row),
        billing: taskBillingOf(row),
        ...(row.billing_state === 'pending'
          ? { settlement: taskSettlementOf(row, path(row.id)) }
          : {}),
        ...(row.outputs === null ? {} : { echoed: JSON.parse(row.outputs) as unknown }),
      }) as unknown as Task,
  };
}

/** An upstream that accepts an echo and, polled, answers with the words it echoed. */
function echoProvider() {
  const sent: ProviderTaskInput[] = [];
  const provider: TaskProvider = {
    lookup: undefined,
    submit: async (input) => {
      sent.push(input);
      return { kind: 'accepted', upstreamTaskId: `echo-${sent.length}` };
    },
    poll: async (upstreamTaskId) => {
      const input = sent[Number(upstreamTaskId.slice('echo-'.length)) - 1];
      const words = input?.prompt?.split(' ').length ?? 0;
      return {
        kind: 'completed',
        outputs: [],
        text: input?.prompt,
        report: { imagesDelivered: 0, secondsDelivered: words, billedFailure: false },
      };
    },
  };
  return { provider, sent };
}

describeEachDialect('a task family registered outside the kernel on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
  });

  /** The caller's identity for one business POST of the echo family (what its route would build). */
  async function identityOf(
    client: TestGateway,
    key: string,
    name: string,
  ): Promise<RequestIdentity> {
    return {
      requestId: client.services.ids.next('req'),
      principal: await client.services.keys.authenticate(key),
      idempotencyKey: name,
      fingerprint: name,
      method: 'POST',
      path: `/v1/echo/${name}`,
      model: 'sim-video',
    };
  }

  /** What the echo family's creation would do: claim with a hold and write its task row. */
  async function createEcho(client: TestGateway, key: string, input: unknown): Promise<string> {
    const services = client.services;
    const model = services.config.models.find((candidate) => candidate.id === 'sim-video');
    if (model === undefined) throw new Error('no sim-video model');
    const price = await services.prices.currentFor(model.id);
    const identity = await identityOf(client, key, 'create');
    const taskId = services.ids.next('task');
    const claim = await services.requests.claim(
      identity,
      { amount: QUOTED, priceVersion: price.priceVersion },
      [],
      async (trx, holdId) => {
        if (holdId === null) throw new Error('a task is always held');
        const row = newTaskRow({
          id: taskId,
          kind: 'echo' as TaskKind,
          identity,
          model,
          input: input as object,
          quotedAmount: QUOTED,
          priceVersion: price.priceVersion,
          lineItems: [],
          holdId,
          now: services.clock.now(),
        });
        await services.taskStore.insert(trx, row);
        return { status: 202, body: services.taskFamilies.of('echo').view(row), taskId };
      },
    );
    expect(claim).toMatchObject({ kind: 'replay', status: 202, fresh: true });
    return taskId;
  }

  it('is sent, polled, priced by its own rules, shown, settled and journalled with no kernel change', async () => {
    gateway = await startTaskGateway(dialect);
    const client = gateway;
    const { provider, sent } = echoProvider();
    client.services.taskFamilies.register(echoFamily(provider));
    const { accountId, key } = await client.account(BALANCE);

    const id = await createEcho(client, key, { words: ['one', 'two', 'three'] });
    expect(await client.balance(accountId)).toMatchObject({ held: QUOTED });
    await workUntil(
      client,
      async () => (await client.services.taskStore.byId(id))?.status === 'succeeded',
    );

    // The family built what the upstream was sent, once.
    expect(sent.map((input) => input.prompt)).toEqual(['one two three']);
    const shown = (await client.services.taskOperations.show(id)) as unknown as Record<
      string,
      unknown
    >;
    expect(shown).toMatchObject({
      object: 'echo.task',
      status: 'succeeded',
      upstream_task_id: 'echo-1',
      billing: { state: 'pending', actual_amount: 3 * PER_WORD },
      settlement: { url: `/v1/echo/${id}/settle` },
      echoed: [{ text: 'one two three' }],
    });

    const row = await client.services.taskStore.byId(id);
    if (row === undefined) throw new Error('no task');
    const settled = await client.services.taskSettlement.settle(
      await identityOf(client, key, 'settle'),
      { kind: 'echo' as TaskKind, id },
      {
        actual_amount: 3 * PER_WORD,
        price_version: row.price_version,
        confirmation: SETTLE_CONFIRMATION,
      },
    );
    expect(settled).toMatchObject({ kind: 'replay', status: 200 });
    expect(await client.balance(accountId)).toEqual({
      balance: BALANCE - 3 * PER_WORD,
      held: 0,
      available: BALANCE - 3 * PER_WORD,
    });
    expect((await client.services.taskStore.byId(id))?.billing_state).toBe('settled');
  });

  it("stops a task whose stored input fails the family's schema for an operator: never sent, never charged", async () => {
    gateway = await startTaskGateway(dialect);
    const client = gateway;
    const { provider, sent } = echoProvider();
    client.services.taskFamilies.register(echoFamily(provider));
    const { accountId, key } = await client.account(BALANCE);

    const id = await createEcho(client, key, { words: [] });
    await workUntil(
      client,
      async () => (await client.services.taskStore.byId(id))?.status === 'submission_unknown',
    );
    expect(sent).toEqual([]);
    const row = await client.services.taskStore.byId(id);
    expect(row).toMatchObject({ due_at: null, billing_state: 'reserved', submission: 'pending' });
    expect(row?.error_message).toMatch(/stored input does not match the echo schema \(words/);
    expect(await client.balance(accountId)).toMatchObject({ balance: BALANCE, held: QUOTED });
    await client.services.taskOperations.resolve(id, { action: 'release', reason: 'bad row' });
    expect(await client.balance(accountId)).toEqual({
      balance: BALANCE,
      held: 0,
      available: BALANCE,
    });
  });
});
