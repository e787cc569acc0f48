import { OutcomeUnknownError, type EmbeddingList, type Tollgate } from '@tollgate/sdk';

/** Embeds a text once: a lost answer is read back from the gateway, never sent again. */
export async function embedOnce(client: Tollgate, text: string): Promise<EmbeddingList> {
  try {
    return await client.embeddings.create({ model: 'sim-embed', input: text });
  } catch (error) {
    if (!(error instanceof OutcomeUnknownError)) throw error;
    // Timeout, reset or submission_unknown: read the original by its idempotency key.
    const record = await client.requests.recover(error.idempotencyKey, { wait: true });
    if (record.status === 'succeeded') return record.result as EmbeddingList;
    throw new Error(`request ${record.id} is ${record.status}: report this id, do not resend`);
  }
}
