import type { ChannelConfig, ModelConfig, ModelPrices } from '../config/schema.js';

/** One channel of a model, normalised: every field known (docs/routing.md). */
export interface Channel {
  /** Unique across the configuration: the admin API's and CLI's name for it. */
  readonly id: string;
  readonly modelId: string;
  readonly upstream: string;
  /** The model name sent to the upstream. */
  readonly model: string;
  readonly weight: number;
  readonly priority: number;
  readonly maxConcurrency: number | null;
  readonly requestsPerMinute: number | null;
  /** What this channel's upstream charges the operator (the model's price shape); null: not configured. */
  readonly cost: ModelPrices | null;
}

/**
 * The model's channels in configuration order. A model configured with a single `upstream` has
 * one channel (`<id>~0`), so every model is routed the same way.
 */
export function channelsOf(model: ModelConfig): Channel[] {
  const configured: ChannelConfig[] = model.channels ?? [
    {
      upstream: model.upstream ?? '',
      model: model.upstream_model ?? model.id,
      weight: 1,
      priority: 0,
    },
  ];
  return configured.map((channel, index) => ({
    id: channel.id ?? `${model.id}~${index}`,
    modelId: model.id,
    upstream: channel.upstream,
    model: channel.model ?? model.id,
    weight: channel.weight,
    priority: channel.priority,
    maxConcurrency: channel.max_concurrency ?? null,
    requestsPerMinute: channel.requests_per_minute ?? null,
    cost: channel.cost ?? null,
  }));
}

/**
 * The channel a new task row names until it is submitted: the first channel of the highest
 * priority, whose upstream model name the stored input carries. The worker picks the channel it
 * really submits on (tasks/task-channels.ts) and writes it on the row; the task then stays on it
 * for polls and downloads, since the upstream's task id means nothing to another channel.
 */
export function taskChannel(model: ModelConfig): Channel {
  const channels = channelsOf(model);
  const top = Math.max(...channels.map((channel) => channel.priority));
  const first = channels.find((channel) => channel.priority === top);
  if (first === undefined) throw new Error(`model ${model.id} has no channel`);
  return first;
}

/**
 * The upstream model name a task whose input was built for `planned` sends on `chosen`. A name
 * that came from the planned channel becomes the chosen channel's; a name set for the whole
 * model (H3's `h3_upstream_models`, which differs from its channel's) is sent on every channel.
 */
export function taskModelOn(stored: string, planned: Channel | undefined, chosen: Channel): string {
  return planned !== undefined && stored === planned.model ? chosen.model : stored;
}
