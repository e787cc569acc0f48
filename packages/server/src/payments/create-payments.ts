import Stripe from 'stripe';
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
 */
export function createPaymentService(deps: {
  readonly db: Kysely<Database>;
  readonly accounts: AccountService;
  readonly audit: AuditLog;
  readonly effects: LedgerEffects;
  readonly logger: FastifyBaseLogger;
  readonly stripe: StripeSettings | undefined;
  /** Unpaid orders one account may have at once (`limits.open_topups_per_account`). */
  readonly maxOpenOrdersPerAccount: number;
}): PaymentService {
  const provider =
    deps.stripe === undefined
      ? undefined
      : new StripeProvider(
          new Stripe(deps.stripe.secretKey, {
            // Stripe's own retries reuse the idempotency key the adapter sends.
            maxNetworkRetries: 2,
            timeout: 20_000,
            telemetry: false,
            ...(deps.stripe.httpClient === undefined ? {} : { httpClient: deps.stripe.httpClient }),
          }),
          deps.stripe.webhookSecret,
          deps.effects.clock,
        );
  return new PaymentService({ ...deps, provider });
}
