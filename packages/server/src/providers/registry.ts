import {
  chatApiOf,
  dialectOf,
  notReceivedAfterMsOf,
  taskLookupOf,
  type Config,
} from '../config/schema.js';
import { PROVIDER_DIALECTS } from './openai-compatible/provider-dialects.js';
import type { TaskKind } from '../store/schema.js';
import type { GuardedFetchDeps } from '../net/guarded-fetch.js';
import { ArkH3Tasks } from './ark/h3-tasks.js';
import { CohereRerank } from './cohere/rerank.js';
import { OpenAiChat } from './openai-compatible/chat.js';
import type { ChatUpstream } from './chat-upstream.js';
import { ResponsesChat } from './openai-responses/responses-chat.js';
import { MessagesChat } from './anthropic/messages-chat.js';
import { OpenAiEmbeddings } from './openai-compatible/embeddings.js';
import { OpenAiImages } from './openai-compatible/images.js';
import { OpenAiVideos } from './openai-compatible/videos.js';
import { lookUpRequest, type RequestLookupAnswer } from './request-lookup.js';
import type { TaskProvider } from './task-provider.js';
import type { EmbeddingsProvider, RerankProvider } from './types.js';
import { UpstreamHttp, type UpstreamCaller, type UpstreamConnector } from './upstream-http.js';

/** The admission queue's name for the reconciler's look-ups (no account's share is used). */
const RECONCILER_ACCOUNT = 'tollgate:reconciler';

/**
 * Builds one HTTP pool per upstream and the adapters for each model's families. The simulator
 * upstream is an ordinary HTTP upstream whose base URL is known only once it listens.
 */
export class ProviderRegistry {
  private readonly pools = new Map<string, UpstreamHttp>();

  constructor(
    private readonly config: Config,
    upstreamKeys: Readonly<Record<string, string>>,
    /** The simulator's URL; `null` when no simulator runs; `undefined` builds no pools at all. */
    simulatorUrl: string | null | undefined,
    connector?: UpstreamConnector,
    /** The network of result URLs on another origin (tests inject a fake one; default: DNS and undici). */
    private readonly guarded?: GuardedFetchDeps,
  ) {
    if (simulatorUrl === undefined) return;
    for (const [name, upstream] of Object.entries(config.upstreams)) {
      const baseUrl =
        upstream.kind === 'simulator'
          ? simulatorUrl === null
            ? undefined
            : // The simulator answers as the dialect's provider under its own prefix.
              upstream.dialect === undefined
              ? `${simulatorUrl}/v1`
              : `${simulatorUrl}/dialect/${upstream.dialect}/v1`
          : upstream.base_url;
      if (baseUrl === undefined)
        throw new Error(`upstream ${name} has no base URL (is the simulator running?)`);
      this.pools.set(name, new UpstreamHttp(baseUrl, upstream, upstreamKeys[name], connector));
    }
  }

  /** The pool of one upstream (a channel names its upstream: routing/channels.ts). */
  private pool(upstream: string): UpstreamHttp {
    const pool = this.pools.get(upstream);
    if (pool === undefined)
      throw new Error(`no upstream pool ${upstream} (built without upstreams?)`);
    return pool;
  }

  /** The embeddings adapter, reading refusals by the upstream's `dialect` (context-length.ts). */
  embeddings(upstream: string, caller: UpstreamCaller): EmbeddingsProvider {
    const config = this.config.upstreams[upstream];
    return new OpenAiEmbeddings(this.pool(upstream).for(caller), dialectOf(config ?? {}));
  }

  /** The chat adapter of the protocol the upstream speaks (`chat_api`; docs/agents.md). */
  chat(upstream: string, caller: UpstreamCaller): ChatUpstream {
    const http = this.pool(upstream).for(caller);
    const config = this.config.upstreams[upstream];
    switch (config === undefined ? 'chat_completions' : chatApiOf(config)) {
      case 'responses':
        return new ResponsesChat(http);
      case 'messages':
        return new MessagesChat(http);
      case 'chat_completions':
        return new OpenAiChat(http, PROVIDER_DIALECTS[dialectOf(config ?? {})]);
    }
  }

  rerank(upstream: string, caller: UpstreamCaller): RerankProvider {
    return new CohereRerank(this.pool(upstream).for(caller));
  }

  /**
   * The task provider of an image, video or H3 model. Videos use the OpenAI Videos shape, H3 the
   * content generation task shape (docs/h3-upstream.md). The read-only look-up of an
   * unanswered submission is the upstream's `task_lookup` capability (default: the simulator
   * only; without it such a task waits for an operator).
   */
  tasks(upstream: string, kind: TaskKind, caller: UpstreamCaller): TaskProvider {
    const pool = this.pools.get(upstream);
    const config = this.config.upstreams[upstream];
    if (pool === undefined || config === undefined)
      throw new Error(`no upstream pool ${upstream} (built without upstreams?)`);
    const lookup = taskLookupOf(config);
    // A result URL on another origin gets the upstream's idle timeout as its whole budget.
    const timeoutMs = config.timeouts.idle_ms;
    const foreign = { timeoutMs, ...(this.guarded === undefined ? {} : { deps: this.guarded }) };
    if (kind === 'image') return new OpenAiImages(pool.for(caller), pool.baseUrl, foreign);
    if (kind === 'h3')
      return new ArkH3Tasks(pool.for(caller), pool.baseUrl, {
        lookup,
        timeoutMs,
        ...(this.guarded === undefined ? {} : { guarded: this.guarded }),
      });
    return new OpenAiVideos(pool.for(caller), { lookup });
  }

  /**
   * The request look-up of an upstream with `request_lookup` (providers/request-lookup.ts);
   * `undefined` for an upstream without it.
   */
  requestLookup(
    upstream: string,
  ): ((requestId: string) => Promise<RequestLookupAnswer>) | undefined {
    const pool = this.pools.get(upstream);
    if (pool === undefined || this.config.upstreams[upstream]?.request_lookup !== true)
      return undefined;
    // The gateway's own read, not a caller's: it queues under an account of its own.
    const http = pool.for({ accountId: RECONCILER_ACCOUNT });
    return (requestId) => lookUpRequest(http, requestId);
  }

  /**
   * How long the look-up of `upstream` (task or request) must keep answering "no such job"
   * before it is believed: its `not_received_after_ms` (config/schema.ts `notReceivedAfterMsOf`).
   */
  notReceivedAfterMs(upstream: string): number {
    const config = this.config.upstreams[upstream];
    if (config === undefined) throw new Error(`no upstream ${upstream} in the configuration`);
    return notReceivedAfterMsOf(config);
  }

  /** Requests in flight and waiting per upstream, for metrics. */
  load(): Record<string, { inFlight: number; waiting: number }> {
    return Object.fromEntries([...this.pools].map(([name, pool]) => [name, pool.load()]));
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((pool) => pool.close()));
  }
}
