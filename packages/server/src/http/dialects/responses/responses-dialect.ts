import type { ChatDialect } from '../chat-dialect.js';
import {
  finishStatus,
  outputItems,
  responseObject,
  responseUsage,
  type ResponseEcho,
} from './responses-answer.js';
import { ResponseEvents } from './responses-stream.js';

/** `POST /v1/responses`: the chat turn's answer as a response object, or as its event stream. */
export function responsesDialect(echo: ResponseEcho): ChatDialect {
  return {
    answer: ({ completion, usage, opaque = [] }, names) => {
      const choice = completion.choices[0];
      const { status, incomplete_details } = finishStatus(choice?.finish_reason ?? null);
      const message = choice?.message;
      return responseObject(echo, names, {
        status,
        incomplete_details,
        error: null,
        output: outputItems(
          {
            content: message?.content ?? null,
            reasoning: message?.reasoning_content ?? '',
            refusal: message?.refusal ?? null,
            toolCalls: message?.tool_calls ?? [],
          },
          names.requestId,
          echo,
          status,
          opaque,
        ),
        usage: responseUsage(usage),
      });
    },
    presenter: (names) => new ResponseEvents(names, echo),
  };
}
