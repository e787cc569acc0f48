import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { toChatBody } from '../../src/http/dialects/messages/to-chat-body.js';
import { messagesBodySchema } from '../../src/http/dialects/messages/messages-request.js';
import { parseInput } from '../../src/errors/input-schema.js';
import { tollgateSignature } from '../../src/http/dialects/messages/thinking-signature.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

interface Message {
  content: (
    { type: 'thinking'; thinking: string; signature: string } | { type: 'text'; text: string }
  )[];
}

/**
 * Risk: a conversation with thinking breaks on its second turn (Claude Code sends every thinking
 * block back), or a block signed by Anthropic itself is silently dropped or sent to a chat
 * upstream that cannot honour it, or a Tollgate block whose text was changed passes as ours.
 */
describeEachDialect('thinking blocks across turns of /v1/messages on $name', (dialect) => {
  let gateway: TestGateway;
  let key: string;
  beforeAll(async () => {
    gateway = await startGateway(dialect);
    ({ key } = await gateway.account(1_000_000_000));
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  const turn = (messages: unknown[]) =>
    gateway.call('POST', '/v1/messages', {
      key,
      idempotencyKey: randomUUID(),
      body: {
        model: 'sim-chat',
        max_tokens: 3_000,
        thinking: { type: 'enabled', budget_tokens: 1_024 },
        messages,
      },
    });

  it('a Tollgate-signed thinking block goes back and is accepted; a foreign or redacted one is refused by path', async () => {
    const question = { role: 'user', content: 'think first' };
    const first = await turn([question]);
    expect(first.statusCode).toBe(200);
    const answer = first.json<Message>();
    const thinking = answer.content[0];
    expect(thinking?.type).toBe('thinking');
    if (thinking?.type !== 'thinking') return;
    expect(thinking.thinking).toContain('think first');
    expect(thinking.signature).toBe(tollgateSignature(thinking.thinking));

    const next = { role: 'user', content: 'and then?' };
    const second = await turn([question, { role: 'assistant', content: answer.content }, next]);
    expect(second.statusCode, second.body).toBe(200);

    const foreign = await turn([
      question,
      { role: 'assistant', content: [{ ...thinking, signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3h' }] },
      next,
    ]);
    expect(foreign.statusCode).toBe(400);
    expect(foreign.json()).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error' },
    });
    expect(foreign.json<{ error: { message: string } }>().error.message).toMatch(
      /^messages\.1\.content\.0: .*can only go back to the Anthropic channel that made it/,
    );

    // Our signature over other text is not ours.
    const tampered = await turn([
      question,
      {
        role: 'assistant',
        content: [
          { ...thinking, thinking: `${thinking.thinking} (edited)` },
          { type: 'text', text: 'ok' },
        ],
      },
      next,
    ]);
    expect(tampered.statusCode).toBe(400);
    expect(tampered.json<{ error: { message: string } }>().error.message).toMatch(
      /^messages\.1\.content\.0: /,
    );

    const redacted = await turn([
      question,
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'ok' },
          { type: 'redacted_thinking', data: 'opaque' },
        ],
      },
      next,
    ]);
    expect(redacted.statusCode).toBe(400);
    expect(redacted.json<{ error: { message: string } }>().error.message).toMatch(
      /^messages\.1\.content\.1: this redacted thinking .*Anthropic channel/,
    );
  });

  it("an accepted thinking block goes back as its message's reasoning_content (sent by the provider's rule), and the budget maps to reasoning_effort", () => {
    const text = 'earlier reasoning';
    const translated = toChatBody(
      parseInput(messagesBodySchema, {
        model: 'sim-chat',
        max_tokens: 20_000,
        thinking: { type: 'enabled', budget_tokens: 8_000 },
        messages: [
          { role: 'user', content: 'q' },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: text, signature: tollgateSignature(text) },
              { type: 'text', text: 'a' },
            ],
          },
          { role: 'user', content: 'q2' },
        ],
      }),
    );
    expect(translated.body['reasoning_effort']).toBe('medium');
    expect(translated.body['messages']).toEqual([
      { role: 'user', content: 'q' },
      { role: 'assistant', content: [{ type: 'text', text: 'a' }], reasoning_content: text },
      { role: 'user', content: 'q2' },
    ]);
  });
});
