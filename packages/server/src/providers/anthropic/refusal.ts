import { notCarried, type UpstreamFailure } from '../upstream-error.js';

/**
 * A request an Anthropic upstream cannot serve as asked, refused before anything is sent: the
 * one rule of every adapter (`notCarried`), its message naming the channel's protocol.
 */
export function refuseField(field: string, message: string): UpstreamFailure {
  return notCarried(field, `${message} (this model's channel is an Anthropic Messages upstream)`);
}
