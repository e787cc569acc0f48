import { modelPriceIssues, type PricedModel } from './price-rules.js';
import type { ModelConfig, UpstreamConfig } from './model-schema.js';

interface Issue {
  readonly path: (string | number)[];
  readonly message: string;
}

/**
 * A model names its upstream one way: `upstream` (with `upstream_model`) or `channels`, never
 * both; every channel names a configured upstream; channel ids are unique across models
 * (`seen` collects them over the whole configuration, with how each was named).
 */
export function channelIssues(
  model: PricedModel & Pick<ModelConfig, 'upstream' | 'upstream_model' | 'channels'>,
  upstreams: Readonly<Record<string, UpstreamConfig>>,
  seen: Map<string, 'implicit' | 'explicit'>,
): Issue[] {
  const issues: Issue[] = [];
  if (model.channels === undefined) {
    if (model.upstream === undefined)
      return [{ path: ['upstream'], message: 'required unless channels are given' }];
    if (!Object.hasOwn(upstreams, model.upstream))
      issues.push({ path: ['upstream'], message: `unknown upstream ${model.upstream}` });
    // The implicit id derives from the model id: a repeated model id is reported as such (once),
    // so only a clash with another model's explicit channel id is a channel problem here.
    const implicitId = `${model.id}~0`;
    if (seen.get(implicitId) === 'explicit')
      issues.push({ path: ['id'], message: `duplicate channel id ${implicitId}` });
    if (!seen.has(implicitId)) seen.set(implicitId, 'implicit');
    return issues;
  }
  if (model.upstream !== undefined)
    issues.push({ path: ['upstream'], message: 'give either upstream or channels, not both' });
  if (model.upstream_model !== undefined)
    issues.push({
      path: ['upstream_model'],
      message: 'with channels, each channel names its model',
    });
  model.channels.forEach((channel, index) => {
    if (!Object.hasOwn(upstreams, channel.upstream))
      issues.push({
        path: ['channels', index, 'upstream'],
        message: `unknown upstream ${channel.upstream}`,
      });
    if (channel.cost !== undefined)
      for (const issue of modelPriceIssues(model, channel.cost, 'admin'))
        issues.push({
          path: ['channels', index, 'cost', ...issue.path.slice(1)],
          message: issue.message,
        });
    const id = channel.id ?? `${model.id}~${index}`;
    if (seen.has(id))
      issues.push({ path: ['channels', index, 'id'], message: `duplicate channel id ${id}` });
    seen.set(id, 'explicit');
  });
  return issues;
}
