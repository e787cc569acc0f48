import { describe } from 'vitest';
import { describeNeeding, requiredService, titleFor } from './required-services.js';

/**
 * Where rate limits and the admin-token throttle keep their counters: in memory always, in Redis
 * when TOLLGATE_TEST_REDIS_URL is set. Without it the Redis variants are skipped LOUDLY and
 * counted, and under CI (CI=true) a missing Redis fails the run instead.
 */
export const redisService = requiredService('Redis', 'TOLLGATE_TEST_REDIS_URL');

export type CounterBackend = 'memory' | 'redis';

/**
 * One suite per backend; the Redis one is registered skipped (and counted) without Redis. `%s`
 * in the title becomes the backend's name. The body gets the Redis URL to hand to the services
 * (`undefined` for memory).
 */
export function describeEachBackend(
  title: string,
  body: (backend: CounterBackend, redisUrl: string | undefined) => void,
): void {
  describe(titleFor(title, 'memory'), () => body('memory', undefined));
  describeNeeding(redisService, titleFor(title, 'redis'), () => body('redis', redisService.url));
}
