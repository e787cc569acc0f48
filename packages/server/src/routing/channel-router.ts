import { chatApiOf, type Config, type ModelConfig, type ModelPrices } from '../config/schema.js';
import { ApiError } from '../errors/api-error.js';
import type { CallerPresence } from '../providers/caller-presence.js';
import { UpstreamFailure } from '../providers/upstream-error.js';
import type { Clock } from '../util/effects.js';
import { pickChannel, type RandomSource } from './channel-selection.js';
import { channelsOf, type Channel } from './channels.js';
import {
  CircuitBreaker,
  DEFAULT_BREAKER,
  type BreakerSettings,
  type BreakerState,
} from './circuit-breaker.js';
import type { DisabledChannels } from './disabled-channels.js';
import {
  judgeAttempt,
  type AttemptVerdict,
  type FailoverPurpose,
  type FailoverUpstream,
} from './failover-rule.js';

/** One try of one channel, as the record lists it (operator views). */
export interface ChannelAttempt {
  readonly channel: string;
  readonly upstream: string;
  readonly outcome: 'succeeded' | AttemptVerdict;
  /** Why it failed (`connect: ECONNREFUSED`, `upstream status 503`); null when it succeeded. */
  readonly detail: string | null;
}

/** A channel as the admin API and CLI list it. */
export interface ChannelStatus {
  readonly id: string;
  readonly model: string;
  readonly upstream: string;
  readonly upstream_model: string;
  readonly weight: number;
  readonly priority: number;
  readonly disabled: boolean;
  readonly breaker: BreakerState;
  readonly consecutive_failures: number;
  readonly cooldown_ends_at: string | null;
  readonly in_flight: number;
  readonly max_concurrency: number | null;
  readonly requests_per_minute: number | null;
}

/** One send on a channel (`ChannelRouter.begin`). */
export interface ChannelSlot {
  /**
   * The attempt's verdict, for the channel's breaker; `no_verdict`: the attempt failed on this
   * side before sending and tells nothing of the channel.
   */
  settle(verdict: 'succeeded' | AttemptVerdict | 'no_verdict'): void;
  /** Frees the channel's concurrency slot. */
  release(): void;
}

const MINUTE_MS = 60_000;

/** What the router knows of one channel in this process. */
class ChannelHealth {
  inFlight = 0;
  /** Send times within the last minute, oldest first (at most `requestsPerMinute` kept). */
  readonly sent: number[] = [];
  constructor(readonly breaker: CircuitBreaker) {}
}

export interface RouterDeps {
  readonly clock: Clock;
  readonly random: RandomSource;
  readonly disabled: DisabledChannels;
  readonly breaker?: BreakerSettings;
  /** How long the disabled list read from the database is trusted (other instances' changes). */
  readonly refreshMs?: number;
  /** Called for every attempt (metrics). */
  readonly onAttempt?: (attempt: ChannelAttempt) => void;
}

/**
 * Chooses the channel for each upstream call and moves to another only when the failover rule
 * allows it (routing/failover-rule.ts). Holds each channel's breaker, in-flight count and
 * request rate in this process; the disabled list comes from the database (refreshed every
 * `refreshMs`, and at once on this instance's own changes).
 */
export class ChannelRouter {
  private readonly health = new Map<string, ChannelHealth>();
  private readonly channelsById = new Map<string, Channel>();
  /** Each model's channels, normalised once here rather than on every request. */
  private readonly channelsByModel = new Map<string, Channel[]>();
  private disabledIds = new Set<string>();
  private disabledReadAt = Number.NEGATIVE_INFINITY;
  private reading: Promise<void> | undefined;

  constructor(
    private readonly config: Config,
    private readonly deps: RouterDeps,
  ) {
    for (const model of config.models) {
      const channels = channelsOf(model);
      this.channelsByModel.set(model.id, channels);
      for (const channel of channels) this.channelsById.set(channel.id, channel);
    }
  }

  /**
   * A routed call for one request: `run` it once; its trail says what was tried. `pinned` keeps
   * it on one channel of the model, with no failover (a conversation carrying opaque state only
   * that channel's upstream can read: docs/agents.md, "Opaque reasoning"); `undefined` when the
   * model has no such channel any more.
   */
  route(model: ModelConfig, caller?: CallerPresence): RoutedCall;
  route(
    model: ModelConfig,
    caller: CallerPresence | undefined,
    pinned: string,
  ): RoutedCall | undefined;
  route(model: ModelConfig, caller?: CallerPresence, pinned?: string): RoutedCall | undefined {
    const channels = this.channelsByModel.get(model.id) ?? channelsOf(model);
    if (pinned === undefined) return new RoutedCall(this, channels, caller);
    const channel = channels.filter((candidate) => candidate.id === pinned);
    return channel.length === 0 ? undefined : new RoutedCall(this, channel, caller);
  }

  /** Whether some channel of the model (by id) has an upstream speaking `api` for chat. */
  modelSpeaks(modelId: string, api: 'chat_completions' | 'responses' | 'messages'): boolean {
    return (this.channelsByModel.get(modelId) ?? []).some(
      (channel) => this.chatApiOf(channel) === api,
    );
  }

  /** The protocol a channel's upstream speaks for chat (`chat_api`). */
  private chatApiOf(channel: Channel): 'chat_completions' | 'responses' | 'messages' {
    const upstream = this.config.upstreams[channel.upstream];
    return upstream === undefined ? 'chat_completions' : chatApiOf(upstream);
  }

  /**
   * A routed call for a model named by id (a task's row names its model): `undefined` when the
   * configuration no longer has that model.
   */
  routeModel(modelId: string, caller?: CallerPresence): RoutedCall | undefined {
    const channels = this.channelsByModel.get(modelId);
    return channels === undefined ? undefined : new RoutedCall(this, channels, caller);
  }

  channel(id: string): Channel | undefined {
    return this.channelsById.get(id);
  }

  async list(): Promise<ChannelStatus[]> {
    await this.freshDisabled(true);
    return [...this.channelsById.values()].map((channel) => this.status(channel));
  }

  /** Disables or enables a channel; `undefined` when no channel has this id. */
  async setDisabled(
    id: string,
    disabled: boolean,
    reason: string | null,
  ): Promise<ChannelStatus | undefined> {
    const channel = this.channelsById.get(id);
    if (channel === undefined) return undefined;
    if (disabled) await this.deps.disabled.disable(id, reason);
    else await this.deps.disabled.enable(id);
    await this.freshDisabled(true);
    return this.status(channel);
  }

  /** The usable channels among `channels` now: enabled, breaker admitting, under their limits. */
  async usable(channels: readonly Channel[]): Promise<Channel[]> {
    await this.freshDisabled(false);
    const now = this.deps.clock.now();
    return channels.filter((channel) => {
      if (this.disabledIds.has(channel.id)) return false;
      const health = this.healthOf(channel);
      if (!health.breaker.admits()) return false;
      if (channel.maxConcurrency !== null && health.inFlight >= channel.maxConcurrency)
        return false;
      if (channel.requestsPerMinute === null) return true;
      while (health.sent.length > 0 && (health.sent[0] ?? now) <= now - MINUTE_MS)
        health.sent.shift();
      return health.sent.length < channel.requestsPerMinute;
    });
  }

  pick(usable: readonly Channel[]): Channel | undefined {
    return pickChannel(usable, this.deps.random);
  }

  /**
   * Marks a send on the channel: it takes one of the channel's `max_concurrency` slots and counts
   * towards its rate. `settle` gives the attempt's verdict to the breaker; `release` frees the
   * slot. They are apart because a streamed answer keeps its slot after its verdict (the response
   * started) until the stream ends. Each runs once, whatever calls it again.
   */
  begin(channel: Channel): ChannelSlot {
    const health = this.healthOf(channel);
    health.inFlight += 1;
    if (channel.requestsPerMinute !== null) health.sent.push(this.deps.clock.now());
    health.breaker.sending();
    let settled = false;
    let released = false;
    return {
      settle: (verdict) => {
        if (settled) return;
        settled = true;
        if (verdict === 'succeeded') health.breaker.succeeded();
        else if (verdict === 'not_processed') health.breaker.failedCertainly();
        else health.breaker.settledWithoutVerdict();
      },
      release: () => {
        if (released) return;
        released = true;
        health.inFlight -= 1;
      },
    };
  }

  /** What the failover rule reads of the channel's upstream (an unknown one: no task statuses). */
  upstreamOf(channel: Channel): FailoverUpstream {
    return (
      this.config.upstreams[channel.upstream] ?? { kind: 'openai', task_failover_statuses: [] }
    );
  }

  noted(attempt: ChannelAttempt): void {
    this.deps.onAttempt?.(attempt);
  }

  private status(channel: Channel): ChannelStatus {
    const health = this.healthOf(channel);
    const endsAt = health.breaker.cooldownEndsAt();
    return {
      id: channel.id,
      model: channel.modelId,
      upstream: channel.upstream,
      upstream_model: channel.model,
      weight: channel.weight,
      priority: channel.priority,
      disabled: this.disabledIds.has(channel.id),
      breaker: health.breaker.state(),
      consecutive_failures: health.breaker.consecutiveFailures(),
      cooldown_ends_at: endsAt === null ? null : new Date(endsAt).toISOString(),
      in_flight: health.inFlight,
      max_concurrency: channel.maxConcurrency,
      requests_per_minute: channel.requestsPerMinute,
    };
  }

  private healthOf(channel: Channel): ChannelHealth {
    let health = this.health.get(channel.id);
    if (health === undefined) {
      health = new ChannelHealth(
        new CircuitBreaker(this.deps.clock, this.deps.breaker ?? DEFAULT_BREAKER),
      );
      this.health.set(channel.id, health);
    }
    return health;
  }

  private async freshDisabled(force: boolean): Promise<void> {
    const now = this.deps.clock.now();
    if (!force && now - this.disabledReadAt < (this.deps.refreshMs ?? 5_000)) return;
    this.reading ??= (async () => {
      try {
        this.disabledIds = new Set((await this.deps.disabled.list()).keys());
        this.disabledReadAt = this.deps.clock.now();
      } finally {
        this.reading = undefined;
      }
    })();
    await this.reading;
  }
}

/**
 * One request's way through its model's channels. `run` sends on the chosen channel; a failure
 * the upstream certainly did not process moves to the next usable channel not yet tried; any
 * other outcome is final. However many channels were tried, the request has one record, one
 * hold and at most one charge: the trail is written on that record.
 */
export class RoutedCall {
  readonly attempts: ChannelAttempt[] = [];
  /** The channel whose answer (or uncertain failure) the request ended with. */
  servedBy: string | null = null;
  /** The channel whose answer succeeded; null until one did. */
  private served: Channel | null = null;
  private heldSlot: ChannelSlot | undefined;

  constructor(
    private readonly router: ChannelRouter,
    private readonly channels: readonly Channel[],
    private readonly caller: CallerPresence | undefined,
  ) {}

  /**
   * Sends on the chosen channel, failing over as the rule allows for `purpose` (a task's
   * submission moves on more rarely than a request: failover-rule.ts). The channel's concurrency
   * slot is freed when `send` settles, or with `holdSlot` only by `finish()`: a streamed answer
   * whose response started still occupies its channel until the stream ends.
   */
  async run<T>(
    send: (channel: Channel) => Promise<T>,
    options: { holdSlot?: boolean; purpose?: FailoverPurpose } = {},
  ): Promise<T> {
    const tried = new Set<string>();
    let lastFailure: UpstreamFailure | undefined;
    for (;;) {
      const usable = (await this.router.usable(this.channels)).filter(
        (channel) => !tried.has(channel.id),
      );
      const channel = this.router.pick(usable);
      if (channel === undefined || (lastFailure !== undefined && this.caller?.gone === true))
        throw lastFailure ?? noChannel(this.channels[0]?.modelId ?? '');
      tried.add(channel.id);
      const slot = this.router.begin(channel);
      try {
        const result = await send(channel);
        slot.settle('succeeded');
        if (options.holdSlot === true) this.heldSlot = slot;
        else slot.release();
        this.note(channel, 'succeeded', null);
        this.servedBy = channel.id;
        this.served = channel;
        return result;
      } catch (error) {
        const upstream = this.router.upstreamOf(channel);
        const verdict = judgeAttempt(error, upstream, options.purpose);
        // A failure on this side before sending (the caller left while queued, no connection of
        // this instance's pool free in time) is no fault of the channel: counted against it, one
        // impatient caller or this instance's own congestion opened the breaker and turned every
        // caller away with "no usable channel" for the cool-down. The channel's health is judged
        // by the request rule whatever was sent: a task's 503 that does not move the task still
        // says the channel is overloaded.
        slot.settle(
          error instanceof UpstreamFailure && error.origin === 'gateway'
            ? 'no_verdict'
            : judgeAttempt(error, upstream),
        );
        slot.release();
        this.note(
          channel,
          verdict,
          error instanceof UpstreamFailure ? error.detail : 'internal error',
        );
        this.servedBy = channel.id;
        if (verdict !== 'not_processed' || !(error instanceof UpstreamFailure)) throw error;
        lastFailure = error;
      }
    }
  }

  /**
   * What the channel that answered charges the operator for this request: `price` (the same
   * pricing as the caller's bill, on the usage the upstream reported) at the channel's `cost`
   * prices. Null when no channel answered or it has no `cost`. Never part of the caller's bill.
   */
  costOf(price: (prices: ModelPrices) => number): number | null {
    const cost = this.served?.cost ?? null;
    return cost === null ? null : price(cost);
  }

  /** Frees the slot a `holdSlot` run kept (the stream ended, however); safe to call again. */
  finish(): void {
    this.heldSlot?.release();
    this.heldSlot = undefined;
  }

  private note(channel: Channel, outcome: ChannelAttempt['outcome'], detail: string | null): void {
    const attempt = { channel: channel.id, upstream: channel.upstream, outcome, detail };
    this.attempts.push(attempt);
    this.router.noted(attempt);
  }
}

function noChannel(modelId: string): UpstreamFailure {
  return new UpstreamFailure(
    'failed',
    new ApiError(
      'MODEL_UNAVAILABLE',
      `no channel of ${modelId} is available now (disabled, cooling down or at its limits); nothing was sent or charged`,
    ),
    null,
    'routing: no usable channel',
  );
}
