import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A provider written from its documentation, on loopback: each request's JSON body is read
 * whole and handed, with its path, to `answer`, which writes the provider's response. For tests
 * that replay recorded answers through the gateway (usage placements, fees, refusals).
 */
export async function recordedUpstream(
  answer: (path: string, body: Record<string, unknown>, response: ServerResponse) => void,
): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    request.on('end', () =>
      answer(request.url ?? '/', JSON.parse(text) as Record<string, unknown>, response),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * A chat completion as an OpenAI-compatible provider answers `body`: plain, or (`stream: true`)
 * each of `deltas` as a chunk, the finish chunk, the usage chunk and `[DONE]`.
 */
export function sendChatCompletion(
  response: ServerResponse,
  body: Record<string, unknown>,
  completion: {
    readonly message: Record<string, unknown>;
    readonly deltas: readonly Record<string, unknown>[];
    readonly finishReason: string;
    readonly usage: unknown;
  },
): void {
  const base = { id: 'cmpl-recorded', created: 1_700_000_000, model: body['model'] };
  if (body['stream'] !== true) {
    response.setHeader('content-type', 'application/json');
    response.end(
      JSON.stringify({
        ...base,
        object: 'chat.completion',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', ...completion.message },
            finish_reason: completion.finishReason,
          },
        ],
        usage: completion.usage,
      }),
    );
    return;
  }
  response.setHeader('content-type', 'text/event-stream');
  const chunk = { ...base, object: 'chat.completion.chunk' };
  const send = (data: unknown) => response.write(`data: ${JSON.stringify(data)}\n\n`);
  for (const delta of completion.deltas) send({ ...chunk, choices: [{ index: 0, delta }] });
  send({ ...chunk, choices: [{ index: 0, delta: {}, finish_reason: completion.finishReason }] });
  send({ ...chunk, choices: [], usage: completion.usage });
  response.end('data: [DONE]\n\n');
}
