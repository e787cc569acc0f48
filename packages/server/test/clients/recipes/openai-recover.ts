import type { Tollgate } from '@tollgate/sdk';
import { randomUUID } from 'node:crypto';
import OpenAI from 'openai';
import type { TollgateOpenAI } from './openai-client.js';

/**
 * Asks once. A lost answer — a timeout, a dropped connection, a 5xx — is read back from the
 * gateway by its Idempotency-Key, never sent again.
 */
export async function askOnce(
  openai: TollgateOpenAI,
  tollgate: Tollgate,
  question: string,
  timeoutMs = 30_000,
): Promise<string | null> {
  const idempotencyKey = randomUUID(); // write it down before sending: it names the request
  try {
    const completion = await openai.chat.completions.create(
      { model: 'sim-chat', messages: [{ role: 'user', content: question }] },
      { idempotencyKey, timeout: timeoutMs },
    );
    return completion.choices[0]?.message.content ?? null;
  } catch (error) {
    const lost =
      error instanceof OpenAI.APIConnectionError || error instanceof OpenAI.InternalServerError;
    if (!lost) throw error;
    // The gateway may have done (and billed) the work: read the original, waiting while it runs.
    const record = await tollgate.requests.recover(idempotencyKey, { wait: true });
    if (record.status !== 'succeeded') {
      throw new Error(`request ${record.id} is ${record.status}: report this id, do not resend`);
    }
    return (record.result as OpenAI.ChatCompletion).choices[0]?.message.content ?? null;
  }
}
