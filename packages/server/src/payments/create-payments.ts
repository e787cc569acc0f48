import type Stripe from 'stripe';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { AccountService } from '../accounts/account-service.js';
import type { AuditLog } from '../audit/audit-log.js';
import type { LedgerEffects } from '../billing/journal.js';
import type { Database } from '../store/schema.js';
import { PaymentService } from './payment-service.js';
import { StripeProvider } from './stripe-provider.js';

type StripeOptions = NonNullable<ConstructorParameters<typeof Stripe>[1]>;

/** Stripe's secrets, from STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET (config/load.ts). */
export interface StripeSettings {
  readonly secretKey: string;
  readonly webhookSecret: string;
  /** How the client reaches Stripe; tests give one that answers without the network. */
  readonly httpClient?: StripeOptions['httpClient'];
}

/**
 * The payment service, with the Stripe adapter when its secrets are given and no provider
 * otherwise (online top-up then answers that it is not configured; redemption codes work).
 * Stripe's SDK is loaded only then: a gateway without payments never pays for importing it
 * (memory at rest: bench/RESULTS.md).
 */
export async function createPaymentService(deps: {
  readonly db: Kysely<Database>;
  readonly accounts: AccountService;
  readonly audit: AuditLog;
  readonly effects: LedgerEffects;
  readonly logger: FastifyBaseLogger;
  readonly stripe: StripeSettings | undefined;
  /** Unpaid orders one account may have at once (`limits.open_topups_per_account`). */
  readonly maxOpenOrdersPerAccount: number;
}): Promise<PaymentService> {
  const provider =
    deps.stripe === undefined ? undefined : await stripeProvider(deps.stripe, deps.effects);
  return new PaymentService({ ...deps, provider });
}

async function stripeProvider(
  settings: StripeSettings,
  effects: LedgerEffects,
): Promise<StripeProvider> {
  const { default: StripeClient } = await import('stripe');
  return new StripeProvider(
    new StripeClient(settings.secretKey, {
      // Stripe's own retries reuse the idempotency key the adapter sends.
      maxNetworkRetries: 2,
      timeout: 20_000,
      telemetry: false,
      ...(settings.httpClient === undefined ? {} : { httpClient: settings.httpClient }),
    }),
    settings.webhookSecret,
    effects.clock,
  );
}
