import type { H3Quote, H3Task, TaskSettlement } from '@tollgate/protocol';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import type { TestGateway } from '../helpers/gateway.js';
import { startTaskGateway } from '../helpers/tasks.js';
import {
  expectExactKeys,
  lineItemKeys,
  taskBillingKeys,
  type Presence,
} from '../helpers/wire-keys.js';
import { finishedH3, h3Quote, h3QuoteAndSubmit, settledH3 } from '../helpers/h3.js';

/**
 * Risk: the H3 bodies drift from their wire types in packages/protocol (the SDK and the OpenAPI
 * document are built on those): a field the type does not name, a field it promises that is
 * missing, an optional one sent as null. Each list below is checked against its type by the
 * compiler (`satisfies`), and each real body against its list.
 */

const quoteKeys = {
  object: 'always',
  model: 'always',
  action: 'always',
  input_digest: 'always',
  price_version: 'always',
  quoted_amount: 'always',
  currency: 'always',
  line_items: 'always',
  closed_reasons: 'always',
} as const satisfies Presence<H3Quote>;
const taskKeys = {
  object: 'always',
  id: 'always',
  model: 'always',
  action: 'always',
  status: 'always',
  request_id: 'always',
  input_digest: 'always',
  source_task_id: 'optional',
  created_at: 'always',
  finished_at: 'optional',
  quote: 'always',
  billing: 'always',
  settlement: 'optional',
  asset_id: 'optional',
  content_path: 'optional',
  seconds: 'optional',
  text: 'optional',
  error: 'optional',
  resolution: 'optional',
} as const satisfies Presence<H3Task>;

const settlementKeys = {
  url: 'always',
  method: 'always',
  expires_at: 'always',
} as const satisfies Presence<TaskSettlement>;

function expectTask(label: string, task: H3Task): void {
  expectExactKeys(label, task, taskKeys);
  expectExactKeys(`${label}.billing`, task.billing, taskBillingKeys);
  if (task.settlement !== undefined)
    expectExactKeys(`${label}.settlement`, task.settlement, settlementKeys);
  for (const item of [...task.quote.line_items, ...(task.billing.line_items ?? [])])
    expectExactKeys(`${label} line item`, item, lineItemKeys);
}

describeEachDialect('H3 bodies match their wire types on $name', (dialect) => {
  let gateway: TestGateway;
  let key: string;
  beforeAll(async () => {
    gateway = await startTaskGateway(dialect);
    key = (await gateway.account(10_000_000)).key;
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  it('quotes (open and closed), accepted, priced, delivered, understood and FAILED tasks', async () => {
    const generate = { action: 'generate', prompt: 'dunes', parameters: { duration: 4 } };
    const open = await h3Quote(gateway, key, generate);
    expectExactKeys('quote', open, quoteKeys);
    open.line_items.forEach((item) => expectExactKeys('quote line item', item, lineItemKeys));
    const closed = await h3Quote(gateway, key, { ...generate, parameters: { duration: 7 } });
    expect(closed.quoted_amount).toBeNull();
    expectExactKeys('closed quote', closed, quoteKeys);

    const { response } = await h3QuoteAndSubmit(gateway, key, generate);
    expectTask('accepted', response.json<H3Task>());
    const priced = await finishedH3(gateway, key, response.json<H3Task>().id);
    expectTask('priced', priced);
    const delivered = await settledH3(gateway, key, generate);
    expectTask('delivered', delivered);
    expect(delivered.content_path).toEqual(expect.any(String));
    const understood = await settledH3(gateway, key, {
      action: 'understand',
      source_task_id: delivered.id,
      parameters: { duration: 4 },
    });
    expectTask('understood', understood);
    expect(understood.text).toEqual(expect.any(String));
    const failing = await h3QuoteAndSubmit(gateway, key, {
      ...generate,
      prompt: 'dunes [sim:task=fail]',
    });
    const failed = await finishedH3(gateway, key, failing.response.json<H3Task>().id);
    expect(failed.status).toBe('FAILED');
    expectTask('failed', failed);
    // The priced one is still pending: settle it so the ledger closes with nothing held.
    const settle = await gateway.call('POST', `/v1/h3/tasks/${priced.id}/settle`, {
      key,
      body: {
        actual_amount: priced.billing.actual_amount,
        price_version: priced.billing.price_version,
        confirmation: 'settle_original_h3',
      },
    });
    expectTask('settled', settle.json<H3Task>());
  });
});
