import type { ChannelConfig, ModelConfig } from '../config/schema.js';

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
  }));
}

/**
 * The channel a task is submitted on: the first channel of the highest priority. A task stays
 * on its channel for polls and downloads (its row keeps `channel` and `upstream`), since the
 * upstream's task id means nothing to another channel.
 */
export function taskChannel(model: ModelConfig): Channel {
  const channels = channelsOf(model);
  const top = Math.max(...channels.map((channel) => channel.priority));
  const first = channels.find((channel) => channel.priority === top);
  if (first === undefined) throw new Error(`model ${model.id} has no channel`);
  return first;
}
