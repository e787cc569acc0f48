import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import {
  MIN_DEFAULT_NOT_RECEIVED_AFTER_MS,
  notReceivedAfterMsOf,
  upstreamCallBoundMs,
  type ConfigFile,
} from '../../src/config/schema.js';
import { testConfig } from '../helpers/gateway.js';

/**
 * Issue 35 item 17: the window after which a look-up's "no such job" is believed (the task or
 * text record fails, its hold released) must outlast the upstream's own timeouts, or work still
 * on its way to the upstream could be failed and its money released while the upstream does it.
 * A shorter window is refused at load, naming the field; the default is always longer.
 */
const withSimulator = (simulator: Record<string, unknown>): ConfigFile =>
  testConfig({ upstreams: { simulator: { kind: 'simulator', ...simulator } } });

describe('the "never received" window of an upstream (not_received_after_ms)', () => {
  it('refuses a window not longer than the upstream timeouts, naming the field', () => {
    // 30 000 queue + 5 000 connect + 60 000 first byte + 60 000 idle.
    for (const window of [1, 155_000]) {
      expect(() => parseConfig(withSimulator({ not_received_after_ms: window }), 'test')).toThrow(
        /upstreams\.simulator\.not_received_after_ms: must be longer than this upstream's timeouts .*= 155000 ms/,
      );
    }
    // Measured against the upstream's own timeouts, not the defaults.
    expect(() =>
      parseConfig(
        withSimulator({
          timeouts: { connect_ms: 1_000, first_byte_ms: 900_000, idle_ms: 60_000 },
          not_received_after_ms: 600_000,
        }),
        'test',
      ),
    ).toThrow(/upstreams\.simulator\.not_received_after_ms: .*= 991000 ms/);
  });

  it('accepts a longer window and uses it', () => {
    const config = parseConfig(withSimulator({ not_received_after_ms: 155_001 }), 'test');
    expect(notReceivedAfterMsOf(config.upstreams['simulator']!)).toBe(155_001);
  });

  it('defaults to twice the timeouts, at least 10 minutes: always longer than the timeouts', () => {
    const plain = parseConfig(withSimulator({}), 'test').upstreams['simulator']!;
    expect(notReceivedAfterMsOf(plain)).toBe(MIN_DEFAULT_NOT_RECEIVED_AFTER_MS);
    const slow = parseConfig(
      withSimulator({ timeouts: { connect_ms: 1_000, first_byte_ms: 900_000, idle_ms: 60_000 } }),
      'test',
    ).upstreams['simulator']!;
    expect(notReceivedAfterMsOf(slow)).toBe(2 * 991_000);
    for (const upstream of [plain, slow])
      expect(notReceivedAfterMsOf(upstream)).toBeGreaterThan(upstreamCallBoundMs(upstream));
  });
});
