import {
  InsufficientFundsError,
  NotFoundError,
  type ChatCompletionParams,
  type Tollgate,
} from '@tollgate/sdk';

/**
 * A 402 after a top-up: a request the gateway recorded (its result costs more than was
 * available) is settled, never regenerated; one it did not record (refused before any work)
 * may be sent again under the same Idempotency-Key.
 */
export async function askWithTopUp(client: Tollgate, code: string): Promise<unknown> {
  const body: ChatCompletionParams = {
    model: 'sim-chat',
    messages: [{ role: 'user', content: 'summarise the report' }],
  };
  try {
    return await client.chat.completions.create(body);
  } catch (error) {
    if (!(error instanceof InsufficientFundsError) || error.idempotencyKey === undefined)
      throw error;
    await client.account.redeem(code);
    const record = await client.requests
      .getByIdempotencyKey(error.idempotencyKey)
      .catch((readError: unknown) => {
        if (readError instanceof NotFoundError) return undefined;
        throw readError;
      });
    if (record === undefined)
      return client.chat.completions.create(body, { idempotencyKey: error.idempotencyKey });
    // Settles only when the record says canSettle; the result is the original one.
    return (await client.requests.settle(record.id)).result;
  }
}
