import type { H3Closed, ModelConfig } from '../config/schema.js';
import type { H3Request } from './h3-input.js';
import type { H3Media } from './h3-media.js';

/**
 * The reasons the model's configuration gives for not opening this input (`h3_closed`; spec 4.4:
 * certain audio references, re-editing a work, video understanding). A rule closes the input when
 * every condition it names holds.
 */
export function h3ClosedReasons(model: ModelConfig, request: H3Request, media: H3Media): string[] {
  return model.h3_closed.filter((rule) => closes(rule, request, media)).map((rule) => rule.reason);
}

function closes(rule: H3Closed, request: H3Request, media: H3Media): boolean {
  if (rule.action !== undefined && rule.action !== request.action) return false;
  const roles = rule.reference_roles;
  if (
    roles !== undefined &&
    !request.references.some((reference) => roles.includes(reference.role))
  )
    return false;
  const sources = rule.video_sources;
  if (
    sources !== undefined &&
    (media.videoSource === undefined || !sources.includes(media.videoSource))
  )
    return false;
  return true;
}
