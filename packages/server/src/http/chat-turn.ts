import type { FastifyReply, FastifyRequest } from 'fastify';
import { insuresAnswer, ZERO_COMPLETION_RULE } from '../chat/zero-completion.js';
import { checkCapabilities } from '../chat/capabilities.js';
import { credibleChatUsage, ruleWithFlag } from '../chat/credible-usage.js';
import {
  chatCost,
  chatReserve,
  heldToolCalls,
  withToolCalls,
  worstCaseInputTokens,
} from '../chat/chat-pricing.js';
import type { ChatUsage } from '../chat/chat-types.js';
import { estimatedInputTokens, locallyCountedUsage } from '../chat/token-estimate.js';
import type { Conversations } from '../chat/conversations.js';
import { inlineImageUrls } from '../chat/inline-image-urls.js';
import { namesAssets, resolveAssets } from '../chat/resolve-assets.js';
import { checkOcrRules } from '../chat/ocr.js';
import { validateChat } from '../chat/validate-chat.js';
import { invalidInput, type ApiError } from '../errors/api-error.js';
import { UpstreamFailure } from '../providers/upstream-error.js';
import type { CallerPresence } from '../providers/caller-presence.js';
import type { ModelConfig } from '../config/schema.js';
import { readIdempotencyKey } from '../requests/idempotency.js';
import { runBilledRequest } from './billed-request.js';
import { judgeIdempotencyKey } from './idempotency-judgement.js';
import type { AppDeps } from './deps.js';
import { upstreamCaller } from './upstream-caller.js';
import { principalOf } from './plugins/authenticate.js';
import { usageFields } from '../chat/usage-fields.js';
import { runStreamedChat } from './streamed-chat.js';
import { withFields } from '../util/with-fields.js';
import type { ChatDialect } from './dialects/chat-dialect.js';
import type { PlacedOpaquePart } from '../chat/opaque-parts.js';
import type { ChannelRouter, RoutedCall } from '../routing/channel-router.js';
import type { Channel } from '../routing/channels.js';
import type { ChatAnswer, ChatCallOptions, ChatUpstream } from '../providers/chat-upstream.js';

/**
 * What a protocol's route hands the turn: the internal request (an OpenAI chat-completions body,
 * the one shape every inbound dialect is translated to) and how the answer reads.
 */
export interface ChatTurnInput {
  /** The chat-completions body; the model id is the caller's. */
  readonly body: Record<string, unknown> | undefined;
  readonly dialect: ChatDialect;
  /**
   * Fields of the caller's protocol taken and not sent upstream by a documented rule, named in
   * `X-Tollgate-Dropped-Fields` before those the chat validation drops.
   */
  readonly dropped?: readonly string[];
  /**
   * Opaque parts the caller sent back (encrypted reasoning, thinking signatures): the turn is
   * pinned to the channel that made them and they go back to it unchanged.
   */
  readonly opaque?: readonly PlacedOpaquePart[];
  /** The caller's `anthropic-beta` header, for Anthropic upstreams only. */
  readonly anthropicBeta?: string | undefined;
  /**
   * How a plain turn calls the serving channel's upstream (default: `complete`): a compaction
   * calls its upstream's compaction endpoint where it has one (responses-compact.ts).
   */
  readonly call?: (
    upstream: ChatUpstream,
    body: Record<string, unknown>,
    options: ChatCallOptions,
  ) => Promise<ChatAnswer>;
  /** Runs after the idempotency key is judged and before the upstream call (state kept for later turns). */
  readonly beforeUpstream?: () => Promise<void>;
  /**
   * An error naming a chat field, named as the caller's protocol names it (`messages.3` is
   * `input.2` in the Responses API, `messages.1.content.0` in Messages): a channel's refusal of
   * the caller's input (a field its upstream cannot carry, a context-length error) is renamed
   * before the turn records it, so the answer, the record and a replay name the same field.
   */
  readonly inCallerTerms?: (error: ApiError) => ApiError;
  /**
   * The caller's protocol's own words for an upstream's context-length refusal (Anthropic's
   * `prompt is too long` on `/v1/messages`, which Claude Code compacts on), given the model and
   * the gateway's estimate of the input (chat/token-estimate.ts, what `count_tokens` answers).
   * Absent: the gateway's words (providers/context-length.ts).
   */
  readonly contextTooLong?: (modelId: string, estimatedInputTokens: number) => ApiError;
}

/**
 * One chat turn, whatever protocol it came in: validation, enabled combinations, OCR rules,
 * worst-case hold, then a plain or streamed upstream call billed on reported usage. The upstream
 * receives the caller's messages untouched, with the output cap that was held.
 */
export async function runChatTurn(
  deps: AppDeps,
  conversations: Conversations,
  request: FastifyRequest,
  reply: FastifyReply,
  input: ChatTurnInput,
): Promise<unknown> {
  const records = deps.requests.records;
  readIdempotencyKey(request.headers);
  const principal = principalOf(request);
  const body = input.body;
  const modelId = body?.['model'];
  if (typeof modelId !== 'string' || modelId === '') throw invalidInput('model', 'is required');
  const model = deps.catalog.resolve(principal, modelId, 'chat');
  // Asset references become ordinary image/video parts before validation (docs/assets.md).
  const withAssets =
    body === undefined || !namesAssets(body)
      ? { body, assetIds: [] }
      : await resolveAssets(body, principal, model, {
          db: deps.store.db,
          storage: deps.assets,
        });
  const chat = validateChat(withAssets.body, model);
  // OCR's own rules first: each says exactly which rule the input broke.
  if (model.families.includes('ocr')) checkOcrRules(chat);
  checkCapabilities(model, chat.features);
  const dropped = [...(input.dropped ?? []), ...chat.dropped];
  if (dropped.length > 0) void reply.header('x-tollgate-dropped-fields', dropped.join(', '));
  const url = chat.images.find((image) => image.kind === 'url');
  if (url !== undefined && !model.image_urls)
    throw invalidInput(
      `${url.path}.url`,
      `image URLs are not enabled for ${model.id}; send the image as a data URI`,
    );
  const price = deps.prices.cachedFor(model.id) ?? (await deps.prices.currentFor(model.id));
  const reserve = {
    amount: chatReserve(chat, model, price.prices),
    priceVersion: price.priceVersion,
  };
  // Fetching a caller's image URLs is work for this request: its key is judged before.
  if (url !== undefined) await judgeIdempotencyKey(request, records);
  const upstreamBody: Record<string, unknown> = Object.assign(
    withFields(chat.passthrough, {
      messages:
        url === undefined ? chat.messages : await inlineImageUrls(chat.messages, deps.fetchDeps),
    }),
    chat.upstreamTokenLimit,
  );
  const caller = upstreamCaller(request, reply);
  const opaque = input.opaque ?? [];
  const routing = routeTurn(deps.channels, model, caller.presence, opaque);
  const options = (channel: Channel) => ({
    channel: channel.id,
    model: model.id,
    opaque,
    maxOutputTokens: chat.maxOutputTokens,
    anthropicBeta: input.anthropicBeta,
  });
  // A channel's refusal of the caller's input names the field as the caller sent it. Changed
  // once the router has given up on every channel, before the turn records it: the record, the
  // answer and a replay say the same. Only the words change (routing/failover-rule.ts decides
  // what is failed over and counted against a channel).
  const inCallerTerms = (error: unknown): never => {
    if (!(error instanceof UpstreamFailure)) throw error;
    const { inCallerTerms: renamed, contextTooLong } = input;
    if (error.refusal === 'context_length' && contextTooLong !== undefined)
      throw error.withApiError(contextTooLong(model.id, estimatedInputTokens(chat, model)));
    if (renamed === undefined || error.apiError.param === undefined) throw error;
    throw error.withApiError(renamed(error.apiError));
  };
  // Each channel is sent the body with its own upstream model name, in its own protocol.
  const provider = {
    // A stream keeps its channel's concurrency slot until it ends (runStreamedChat frees it).
    stream: (signal: AbortSignal) =>
      routing
        .run(
          (channel) =>
            deps.providers
              .chat(channel.upstream, caller)
              .stream(withFields(upstreamBody, { model: channel.model }), signal, options(channel)),
          { holdSlot: true },
        )
        .catch(inCallerTerms),
    complete: () =>
      routing
        .run((channel) => {
          const upstream = deps.providers.chat(channel.upstream, caller);
          const sent = withFields(upstreamBody, { model: channel.model });
          return input.call === undefined
            ? upstream.complete(sent, options(channel))
            : input.call(upstream, sent, options(channel));
        })
        .catch(inCallerTerms),
  };
  // Usage beyond what the gateway allowed is billed at the bound and flagged (chat/credible-usage.ts).
  const bounds = {
    inputUpperEstimate: worstCaseInputTokens(chat, model),
    outputCap: chat.maxOutputTokens,
    // Tool calls are bounded where they are billed: the fee's hold covers this many.
    ...(price.prices.per_tool_call === undefined
      ? {}
      : { toolCallCap: heldToolCalls(chat, model) }),
  };
  const bill = (usage: ChatUsage) => {
    const credible = credibleChatUsage(usage, bounds);
    const cost = chatCost(credible.billed, price.prices);
    return {
      amount: cost.amount,
      rule: ruleWithFlag(cost.rule, credible.flag),
      lineItems: cost.lineItems,
      flag: credible.flag,
      // The operator's side: the serving channel's own prices on what its upstream reported.
      channelCost: routing.costOf((prices) => chatCost(usage, prices).amount),
    };
  };
  const names = {
    requestId: request.id,
    model: model.id,
    created: Math.floor(deps.clock.now() / 1000),
  };
  if (input.beforeUpstream !== undefined) {
    // State for later turns is kept only for a request this key may make: judged before.
    await judgeIdempotencyKey(request, records);
    await input.beforeUpstream();
  }
  const conversationId = chat.conversationId;
  if (conversationId !== undefined) {
    // A turn taken is seen by the conversation's other requests: the key is judged before.
    await judgeIdempotencyKey(request, records);
    await conversations.beginTurn(conversationId, principal.keyId, request.id);
  }
  try {
    if (chat.stream) {
      return await runStreamedChat(deps, request, reply, {
        model: model.id,
        reserve,
        assetIds: withAssets.assetIds,
        presenter: input.dialect.presenter(names, chat),
        outputCap: chat.maxOutputTokens,
        routing,
        open: (signal) => provider.stream(signal),
        price: bill,
        insured: model.zero_completion_insurance,
        countLocally: (generated) => locallyCountedUsage(chat, model, generated),
      });
    }
    return await runBilledRequest(deps, request, reply, {
      model: model.id,
      reserve,
      assetIds: withAssets.assetIds,
      routing,
      execute: async () => {
        const result = await provider.complete();
        const usage = withToolCalls(
          result.usage,
          result.completion.choices.reduce(
            (calls, choice) => calls + (choice.message.tool_calls?.length ?? 0),
            0,
          ),
        );
        const finishReason =
          result.completion.choices.find((choice) => choice.finish_reason != null)?.finish_reason ??
          null;
        const insured = insuresAnswer(model.zero_completion_insurance, {
          producedOutput: false,
          finishReason,
          completionTokens: result.usage.completionTokens,
        });
        const { amount, rule, flag, channelCost, lineItems } = insured
          ? {
              amount: 0,
              rule: `${ZERO_COMPLETION_RULE}: no output tokens and no finish reason; not charged`,
              flag: undefined,
              channelCost: null,
              lineItems: undefined,
            }
          : bill(usage);
        return {
          kind: 'succeeded',
          amount,
          channelCost,
          pricingRule: rule,
          ...(lineItems === undefined ? {} : { lineItems }),
          ...(flag === undefined ? {} : { usageFlag: flag }),
          usage: usageFields(usage),
          upstreamRequestId: result.upstreamRequestId,
          body: input.dialect.answer(result, names),
        };
      },
    });
  } finally {
    if (conversationId !== undefined) await conversations.endTurn(conversationId, request.id);
  }
}

/**
 * The channels a turn may use: every channel of the model, or, when the caller sent opaque parts
 * back, only the channel that made them (no failover can move them: docs/agents.md, "Opaque
 * reasoning"). Parts from two channels, or from a channel that no longer serves the model, are a
 * 400 naming the part.
 */
function routeTurn(
  channels: ChannelRouter,
  model: ModelConfig,
  caller: CallerPresence | undefined,
  opaque: readonly PlacedOpaquePart[],
): RoutedCall {
  const first = opaque[0];
  if (first === undefined) return channels.route(model, caller);
  const other = opaque.find((part) => part.channel !== first.channel);
  if (other !== undefined)
    throw invalidInput(
      other.path,
      `was made by channel ${other.channel}, and ${first.path} by channel ${first.channel}: one turn goes to one channel; start a new conversation`,
    );
  const pinned = channels.route(model, caller, first.channel);
  if (pinned === undefined)
    throw invalidInput(
      first.path,
      `was made by channel ${first.channel}, which no longer serves ${model.id}; only that channel's upstream can read it: start a new conversation, or leave it out`,
    );
  return pinned;
}
