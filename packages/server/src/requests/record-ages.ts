import { upstreamCallBoundMs, type Config } from '../config/schema.js';

/**
 * How old a `processing` record must be before its instance is presumed dead: twice the longest
 * an upstream call may take (connect, first byte and one idle gap) with the longest queue wait.
 */
export function staleAfterMs(config: Config): number {
  return Math.max(...Object.values(config.upstreams).map(upstreamCallBoundMs)) * 2;
}

/**
 * How often a long stream refreshes its record (requests/record-heartbeat.ts): a quarter of the
 * stale age. A live stream sends a chunk at least every `idle_ms` (else it ends as stalled), so
 * its record is never older than this plus `idle_ms`, at most three quarters of the stale age:
 * the sweeper never takes it for one left by a dead instance, with room for a late sweep and
 * some clock skew between instances.
 */
export function heartbeatEveryMs(config: Config): number {
  return Math.max(1, Math.floor(staleAfterMs(config) / 4));
}
