import type { Redis } from 'ioredis';
import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import { ApiError } from '../errors/api-error.js';

/** Failed sign-ins one client address may make per window (several people may share it). */
export const SIGN_IN_FAILURES_PER_ADDRESS = 20;
/** Failed sign-ins against one email per window, from anywhere. */
export const SIGN_IN_FAILURES_PER_ACCOUNT = 10;
/**
 * Self sign-ups one client address may attempt per window, successful or not: each makes an
 * account, and a refused one (an email in use) tells whether the email exists, so both are
 * bounded per address like failed sign-ins.
 */
export const SIGN_UPS_PER_ADDRESS = 5;
const WINDOW_SECONDS = 15 * 60;

/**
 * Counts failed console sign-ins per client address and per email (in memory, or in Redis
 * shared by every instance). Past either limit, every sign-in from that address or for that
 * email is 429 for the rest of the window, the right password included, so a guesser cannot
 * tell a hit from a miss. Unknown emails are counted like known ones: the answer never tells
 * which emails exist.
 */
export class LoginThrottle {
  private readonly byAddress: RateLimiterAbstract;
  private readonly byAccount: RateLimiterAbstract;
  private readonly signUpsByAddress: RateLimiterAbstract;

  constructor(redis: Redis | undefined) {
    this.byAddress = limiter(redis, SIGN_IN_FAILURES_PER_ADDRESS, 'address');
    this.byAccount = limiter(redis, SIGN_IN_FAILURES_PER_ACCOUNT, 'account');
    this.signUpsByAddress = limiter(redis, SIGN_UPS_PER_ADDRESS, 'sign-up');
  }

  /**
   * Counts one sign-up attempt from `address`; past SIGN_UPS_PER_ADDRESS in the window, or when
   * the address is already blocked for failed sign-ins, 429 and nothing is created.
   */
  async claimSignUp(address: string): Promise<void> {
    const failures = await this.byAddress.get(address);
    if (failures !== null && failures.consumedPoints >= SIGN_IN_FAILURES_PER_ADDRESS)
      throw throttled(failures.msBeforeNext, 'this address');
    try {
      await this.signUpsByAddress.consume(address, 1);
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes)
        throw throttled(rejection.msBeforeNext, 'this address', 'sign-ups');
      throw rejection;
    }
  }

  async refuseIfBlocked(address: string, email: string): Promise<void> {
    const [perAddress, perAccount] = await Promise.all([
      this.byAddress.get(address),
      this.byAccount.get(email),
    ]);
    if (perAddress !== null && perAddress.consumedPoints >= SIGN_IN_FAILURES_PER_ADDRESS)
      throw throttled(perAddress.msBeforeNext, 'this address');
    if (perAccount !== null && perAccount.consumedPoints >= SIGN_IN_FAILURES_PER_ACCOUNT)
      throw throttled(perAccount.msBeforeNext, 'this account');
  }

  async recordFailure(address: string, email: string): Promise<void> {
    await Promise.all([this.byAddress.penalty(address, 1), this.byAccount.penalty(email, 1)]).catch(
      (rejection: unknown) => {
        if (rejection instanceof RateLimiterRes) return;
        throw rejection;
      },
    );
  }
}

function limiter(redis: Redis | undefined, points: number, what: string): RateLimiterAbstract {
  const options = { points, duration: WINDOW_SECONDS };
  return redis === undefined
    ? new RateLimiterMemory(options)
    : new RateLimiterRedis({
        ...options,
        storeClient: redis,
        keyPrefix: `tollgate:console-sign-in:${what}`,
      });
}

function throttled(msBeforeNext: number, scope: string, what = 'failed sign-ins'): ApiError {
  const seconds = Math.max(1, Math.ceil(msBeforeNext / 1000));
  return new ApiError(
    'RATE_LIMITED',
    `too many ${what} for ${scope}; retry after ${seconds} s`,
    undefined,
    { 'retry-after': String(seconds) },
  );
}
