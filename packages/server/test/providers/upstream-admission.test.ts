import { describe, expect, it } from 'vitest';
import { presenceOfSignal } from '../../src/providers/caller-presence.js';
import { UpstreamAdmission } from '../../src/providers/upstream-admission.js';
import { UpstreamFailure } from '../../src/providers/upstream-error.js';

/** Settles pending promise callbacks. */
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('fair admission to an upstream pool', () => {
  it('one account cannot take more than its share: another account is admitted at once', async () => {
    const admission = new UpstreamAdmission({ capacity: 4, perAccount: 2, queueTimeoutMs: 5_000 });
    const greedy = [1, 2, 3, 4, 5].map(() => admission.acquire('greedy'));
    await tick();
    expect(admission.counts()).toEqual({ inFlight: 2, waiting: 3 });
    const other = await admission.acquire('other');
    expect(admission.counts()).toEqual({ inFlight: 3, waiting: 3 });
    other();
    for (const pending of greedy.slice(0, 2)) (await pending)();
    await tick();
    expect(admission.counts()).toEqual({ inFlight: 2, waiting: 1 });
    // Every acquisition ends here, its queue timer cleared: test files share a process, and a
    // waiter left behind would be refused seconds later, in another file, with no one to catch it.
    for (const pending of greedy.slice(2)) (await pending)();
    expect(admission.counts()).toEqual({ inFlight: 0, waiting: 0 });
  });

  it('freed slots go to waiting accounts in turn, not to the account that queued most', async () => {
    const admission = new UpstreamAdmission({ capacity: 1, perAccount: 1, queueTimeoutMs: 5_000 });
    const order: string[] = [];
    const first = await admission.acquire('a');
    const waiting = [
      ...['a', 'a', 'a'].map((account) => admission.acquire(account)),
      admission.acquire('b'),
    ].map((pending, index) =>
      pending.then((release) => {
        order.push(index < 3 ? 'a' : 'b');
        release();
      }),
    );
    first();
    await Promise.all(waiting);
    // "b" queued last but is served second: one turn per account.
    expect(order).toEqual(['a', 'b', 'a', 'a']);
  });

  it('a request that waits too long fails as never sent, and its place is not leaked', async () => {
    const admission = new UpstreamAdmission({ capacity: 1, perAccount: 1, queueTimeoutMs: 50 });
    const held = await admission.acquire('a');
    const refused = await admission.acquire('b').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(UpstreamFailure);
    expect(refused).toMatchObject({ certainty: 'failed', apiError: { code: 'MODEL_UNAVAILABLE' } });
    expect(admission.counts()).toEqual({ inFlight: 1, waiting: 0 });
    held();
    held();
    expect(admission.counts()).toEqual({ inFlight: 0, waiting: 0 });
  });

  it('a caller who goes away while waiting is dropped unsent', async () => {
    const admission = new UpstreamAdmission({ capacity: 1, perAccount: 1, queueTimeoutMs: 5_000 });
    const held = await admission.acquire('a');
    const gone = new AbortController();
    const pending = admission
      .acquire('b', presenceOfSignal(gone.signal))
      .catch((error: unknown) => error);
    gone.abort();
    expect(await pending).toMatchObject({ certainty: 'failed' });
    held();
    expect(admission.counts()).toEqual({ inFlight: 0, waiting: 0 });
  });
});
