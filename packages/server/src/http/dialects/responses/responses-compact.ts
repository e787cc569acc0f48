import type {
  ChatAnswer,
  ChatCallOptions,
  ChatUpstream,
} from '../../../providers/chat-upstream.js';
import type { ChatDialect } from '../chat-dialect.js';
import { responseIdOf, responseUsage } from './responses-answer.js';
import type { ResponsesInputItem } from './responses-request.js';
import { SUMMARY_REQUEST, summaryToken } from '../../../chat/compaction-summary.js';

/**
 * `POST /v1/responses/compact` (docs/agents.md, "Compaction"): Codex CLI asks the server to
 * compact a long session's history, and a 404 there ends the session. It is a chat turn like any
 * other (one record, one hold, one exact charge), answered two ways by the serving channel:
 *
 * - an upstream that speaks Responses compacts the history itself (`ChatUpstream.compact`); its
 *   encrypted summary is sealed for the caller like encrypted reasoning, so a later turn that
 *   carries it is pinned to that channel;
 * - any other upstream is asked for a summary as a plain chat turn (the request's last message
 *   is `SUMMARY_REQUEST`), and the answer is the caller's own messages followed by a compaction
 *   item holding that summary (chat/compaction-summary.ts): sent back, it reads as a user
 *   message every channel can read.
 *
 * Codex CLI 0.171 compacts in the stream instead (`compaction_trigger`): compaction-events.ts.
 */

/** The compaction item of a summary the gateway made, named after its request. */
export function summaryItem(requestId: string, summary: string) {
  return {
    type: 'compaction' as const,
    id: `cmp_${requestId.replace(/^req_/, '')}`,
    encrypted_content: summaryToken(summary),
  };
}

/**
 * The internal request of a compaction: the conversation, then the summary request, with tools
 * kept for the history's sake but not to be called.
 */
export function compactionRequest(chat: Record<string, unknown>): Record<string, unknown> {
  const messages = (chat['messages'] ?? []) as unknown[];
  return {
    ...chat,
    messages: [...messages, { role: 'user', content: SUMMARY_REQUEST }],
    ...(chat['tools'] === undefined ? {} : { tool_choice: 'none' }),
  };
}

/** A user message of the caller's input, as the compacted history keeps it: its text parts. */
function keptMessage(item: ResponsesInputItem): Record<string, unknown>[] {
  if (item.type !== 'message' || item.role !== 'user') return [];
  const texts =
    typeof item.content === 'string'
      ? [item.content]
      : item.content.flatMap((part) => (part.type === 'input_text' ? [part.text] : []));
  if (texts.length === 0) return [];
  return [
    {
      type: 'message',
      role: 'user',
      content: texts.map((text) => ({ type: 'input_text', text })),
    },
  ];
}

/**
 * How the turn calls the serving channel: its compaction endpoint where it has one (sent the
 * conversation without the summary request, which is the gateway's own), else a chat completion
 * whose text becomes the summary item after the caller's kept messages.
 */
export function compactionCall(requestId: string, input: readonly ResponsesInputItem[]) {
  return async (
    upstream: ChatUpstream,
    body: Record<string, unknown>,
    options: ChatCallOptions,
  ): Promise<ChatAnswer> => {
    if (upstream.compact !== undefined) {
      const messages = body['messages'] as unknown[];
      return upstream.compact({ ...body, messages: messages.slice(0, -1) }, options);
    }
    const answer = await upstream.complete(body, options);
    const summary = answer.completion.choices[0]?.message?.content ?? '';
    return {
      ...answer,
      items: [...input.flatMap(keptMessage), summaryItem(requestId, summary)],
    };
  };
}

/** A compaction's answer, as OpenAI's `response.compaction` object. It is never streamed. */
export const compactionDialect: ChatDialect = {
  answer: ({ items = [], usage }, names) => ({
    id: responseIdOf(names.requestId),
    object: 'response.compaction',
    created_at: names.created,
    output: items,
    usage: responseUsage(usage),
  }),
  presenter: () => {
    throw new Error('a compaction is never streamed: the route refuses stream: true');
  },
};
