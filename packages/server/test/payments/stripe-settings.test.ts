import { describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/config/load.js';

/**
 * The risk: online top-up half configured — a secret key without the webhook secret would open
 * checkouts whose payments could never be verified (paid, never credited).
 */
describe('Stripe settings from the environment', () => {
  it('both secrets enable online top-up; neither leaves it off', () => {
    expect(
      loadSettings({ STRIPE_SECRET_KEY: 'sk_test_abc', STRIPE_WEBHOOK_SECRET: 'whsec_abc' }).stripe,
    ).toEqual({ secretKey: 'sk_test_abc', webhookSecret: 'whsec_abc' });
    expect(loadSettings({}).stripe).toBeUndefined();
    expect(
      loadSettings({ STRIPE_SECRET_KEY: '', STRIPE_WEBHOOK_SECRET: '' }).stripe,
    ).toBeUndefined();
  });

  it('one without the other refuses to start, naming both', () => {
    expect(() => loadSettings({ STRIPE_SECRET_KEY: 'sk_test_abc' })).toThrow(
      /both STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET/,
    );
    expect(() => loadSettings({ STRIPE_WEBHOOK_SECRET: 'whsec_abc' })).toThrow(
      /both STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET/,
    );
  });

  it('a value that is not a Stripe secret (a publishable key, a swapped pair) is refused naming the variable', () => {
    expect(() =>
      loadSettings({ STRIPE_SECRET_KEY: 'pk_test_abc', STRIPE_WEBHOOK_SECRET: 'whsec_abc' }),
    ).toThrow('invalid environment variable STRIPE_SECRET_KEY');
    expect(() =>
      loadSettings({ STRIPE_SECRET_KEY: 'whsec_abc', STRIPE_WEBHOOK_SECRET: 'sk_test_abc' }),
    ).toThrow(/STRIPE_SECRET_KEY/);
  });
});
