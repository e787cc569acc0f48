import type { ModelConfig } from '../config/schema.js';
import { invalidInput } from '../errors/api-error.js';
import type { Probe } from './probe.js';

/** Checks a probed upload against the target model's configured input requirements. */
export function checkRequirements(model: ModelConfig, probe: Probe, bytes: number): void {
  const rules = model.asset_requirements;
  if (rules === undefined) return;
  const param = 'X-Tollgate-Model';
  if (rules.media_types !== undefined && !rules.media_types.includes(probe.mediaType)) {
    throw invalidInput(
      param,
      `${model.id} accepts ${rules.media_types.join(', ')}; this file is ${probe.mediaType}`,
    );
  }
  if (rules.max_bytes !== undefined && bytes > rules.max_bytes)
    throw invalidInput(
      param,
      `${model.id} accepts at most ${rules.max_bytes} bytes; this file has ${bytes}`,
    );
  if (rules.max_width !== undefined && probe.width !== null && probe.width > rules.max_width) {
    throw invalidInput(
      param,
      `${model.id} accepts images at most ${rules.max_width} pixels wide; this one is ${probe.width}`,
    );
  }
  if (rules.max_height !== undefined && probe.height !== null && probe.height > rules.max_height) {
    throw invalidInput(
      param,
      `${model.id} accepts images at most ${rules.max_height} pixels high; this one is ${probe.height}`,
    );
  }
  if (
    rules.max_duration_seconds !== undefined &&
    probe.durationSeconds !== null &&
    probe.durationSeconds > rules.max_duration_seconds
  ) {
    throw invalidInput(
      param,
      `${model.id} accepts at most ${rules.max_duration_seconds} s; this file lasts ${probe.durationSeconds} s`,
    );
  }
}
