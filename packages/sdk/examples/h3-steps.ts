import type { H3Input, H3Task, Tollgate } from '@tollgate/sdk';

/** The H3 steps by hand (spec 4.4, 4.5); `client.h3.generate` does the same with a journal. */
export async function understandVideo(client: Tollgate, sourceTaskId: string): Promise<H3Task> {
  const input: H3Input = {
    model: 'sim-h3',
    action: 'understand',
    prompt: 'what happens?',
    source_task_id: sourceTaskId,
    parameters: { duration: 5 },
  };
  const quote = await client.h3.quote(input);
  // Throws QuoteClosedError without sending when closed_reasons is not empty.
  let task = await client.h3.submit(input, quote);
  while (task.status === 'queued' || task.status === 'running') {
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    task = await client.h3.get(task.id, { refresh: true });
  }
  // Settle only what the task itself says, with the H3 confirmation word.
  if (task.billing.settlement_pending) task = await client.h3.settle(task);
  return task; // task.text is the answer once delivered
}
