/**
 * The OpenAI Responses API as Tollgate answers it (`POST /v1/responses`, `GET /v1/responses/{id}`;
 * docs/agents.md). Field names and meanings are OpenAI's; only the fields listed are sent.
 */

/** Token counts of one response, integers, as billed (`output_tokens` includes reasoning). */
export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export interface ResponseOutputText {
  type: 'output_text';
  text: string;
  annotations: never[];
  logprobs: never[];
}

export interface ResponseRefusal {
  type: 'refusal';
  refusal: string;
}

export interface ResponseOutputMessage {
  type: 'message';
  /** `msg_…` */
  id: string;
  status: 'in_progress' | 'completed' | 'incomplete';
  role: 'assistant';
  content: (ResponseOutputText | ResponseRefusal)[];
}

export interface ResponseFunctionCall {
  type: 'function_call';
  /** `fc_…` */
  id: string;
  /** The id a `function_call_output` item names to answer this call. */
  call_id: string;
  name: string;
  /** The arguments as JSON text, exactly as the model wrote them. */
  arguments: string;
  status: 'in_progress' | 'completed' | 'incomplete';
}

export interface ResponseReasoningItem {
  type: 'reasoning';
  /** `rs_…` */
  id: string;
  summary: { type: 'summary_text'; text: string }[];
  /** The model's reasoning text, when its upstream shows it (chat upstreams' `reasoning_content`). */
  content?: { type: 'reasoning_text'; text: string }[];
  /**
   * Present when the request's `include` lists `reasoning.encrypted_content`: the upstream's
   * opaque reasoning, or `null` when the upstream gave none (a chat-completions upstream never does).
   */
  encrypted_content?: string | null;
}

/**
 * A compacted history's summary: the one output item of a compaction turn (an input ending in
 * `{"type": "compaction_trigger"}`), and the last item of `POST /v1/responses/compact`. It goes
 * back unchanged in later input, where it stands for the history it summarised.
 */
export interface ResponseCompactionItem {
  type: 'compaction';
  id: string;
  /** A `tgs1.` (the gateway's summary) or `tgo1.` (an upstream's, sealed) token. */
  encrypted_content: string;
}

export type ResponseOutputItem =
  ResponseOutputMessage | ResponseFunctionCall | ResponseReasoningItem | ResponseCompactionItem;

export interface ResponseError {
  /** One of the spec's error codes. */
  code: string;
  message: string;
}

/** A response object: the answer of `POST /v1/responses` and of `GET /v1/responses/{id}`. */
export interface ResponseObject {
  /** `resp_…`: the request's id with the `req_` prefix replaced. */
  id: string;
  object: 'response';
  /** Unix seconds. */
  created_at: number;
  status: 'in_progress' | 'completed' | 'incomplete' | 'failed';
  error: ResponseError | null;
  incomplete_details: { reason: 'max_output_tokens' | 'content_filter' } | null;
  instructions: string | null;
  max_output_tokens: number | null;
  /** The model id the caller named. */
  model: string;
  output: ResponseOutputItem[];
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  reasoning: { effort: string | null; summary: string | null };
  store: boolean;
  temperature: number | null;
  text: { format: Record<string, unknown> };
  tool_choice: unknown;
  tools: Record<string, unknown>[];
  top_p: number | null;
  truncation: 'disabled';
  /** `null` until the response is complete. */
  usage: ResponseUsage | null;
  metadata: Record<string, string>;
}

/**
 * One event of a streamed response (`stream: true`): its SSE `event:` line names it and `type`
 * repeats the name; `sequence_number` counts the stream's events from 0. Which fields an event
 * carries depends on its type (docs/agents.md, "Responses stream").
 */
export interface ResponseStreamEvent {
  type: string;
  sequence_number: number;
  /** `response.created`, `.in_progress`, `.completed`, `.incomplete`, `.failed`. */
  response?: ResponseObject;
  output_index?: number;
  /** `response.output_item.added` / `.done`. */
  item?: ResponseOutputItem;
  item_id?: string;
  content_index?: number;
  /** `response.content_part.added` / `.done`. */
  part?: Record<string, unknown>;
  /** The text added by a `*.delta` event. */
  delta?: string;
  /** The whole text of a `*.done` event. */
  text?: string;
  refusal?: string;
  /** `response.function_call_arguments.done`. */
  name?: string;
  arguments?: string;
  logprobs?: never[];
}

/** One item of a compacted history: a kept message, or an upstream's sealed summary. */
export type CompactedItem =
  | {
      type: 'message';
      role: 'user' | 'assistant' | 'developer' | 'system';
      content: { type: 'input_text' | 'output_text'; text: string }[];
    }
  | {
      type: 'compaction';
      /** The item's id (an upstream's may have none). */
      id?: string;
      /**
       * A `tgs1.` token (a summary the gateway made: any channel reads it) or a `tgo1.` token (an
       * upstream's encrypted summary: it goes back only to the channel that made it).
       */
      encrypted_content: string;
    };

/**
 * The answer of `POST /v1/responses/compact`: the items that replace the history sent
 * (docs/agents.md, "Compaction").
 */
export interface ResponseCompaction {
  /** `resp_…`, as a response's id. */
  id: string;
  object: 'response.compaction';
  /** Unix seconds. */
  created_at: number;
  output: CompactedItem[];
  usage: ResponseUsage;
}
