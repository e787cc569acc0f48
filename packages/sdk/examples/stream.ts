import { APIError, OutcomeUnknownError, type Tollgate } from '@tollgate/sdk';

/** Streams a reply to stdout; an error event inside the stream is thrown, not swallowed. */
export async function streamReply(client: Tollgate, question: string): Promise<void> {
  const stream = await client.chat.completions.stream({
    model: 'sim-chat',
    messages: [{ role: 'user', content: question }],
  });
  try {
    for await (const chunk of stream) process.stdout.write(chunk.choices[0]?.delta.content ?? '');
  } catch (error) {
    if (error instanceof OutcomeUnknownError) {
      // Cut before [DONE]: the record says what was produced and billed.
      const record = await client.requests.recover(stream.idempotencyKey);
      console.error(`stream ${record.id} ended ${record.status}`);
    } else if (error instanceof APIError) {
      console.error(`${error.status} ${error.code} (request ${error.requestId}): ${error.message}`);
    } else throw error;
  }
}
