import type { Redis } from 'ioredis';
import type { FastifyBaseLogger } from 'fastify';
import type { AccountService } from '../accounts/account-service.js';
import type { AuditLog } from '../audit/audit-log.js';
import type { AssetStorage } from '../assets/local-storage.js';
import type { KeyService } from '../auth/key-service.js';
import type { PriceBook } from '../billing/price-book.js';
import type { PaymentService } from '../payments/payment-service.js';
import type { Config } from '../config/schema.js';
import type { ConsoleSessions } from '../users/console-sessions.js';
import type { ConsoleUsers } from '../users/console-users.js';
import type { ConsoleTotp } from '../users/totp.js';
import type { ConsoleSignUp } from '../users/self-signup.js';
import type { ModelCatalog } from '../models/model-catalog.js';
import type { GuardedFetchDeps } from '../net/guarded-fetch.js';
import type { ProviderRegistry } from '../providers/registry.js';
import type { ChannelRouter } from '../routing/channel-router.js';
import type { RequestService } from '../requests/request-service.js';
import type { SettlementService } from '../requests/settlement-service.js';
import type { UsageReviewService } from '../requests/usage-review-service.js';
import type { H3Service } from '../h3/h3-service.js';
import type { TaskService } from '../families/media/media-task-service.js';
import type { TaskFamilies } from '../tasks/task-family.js';
import type { TaskReads } from '../tasks/task-reads.js';
import type { TaskOperations } from '../tasks/task-operations.js';
import type { TaskSettlement } from '../tasks/task-settlement.js';
import type { BudgetService } from '../operator/budget-service.js';
import type { Store } from '../store/database.js';
import type { AccountUsageReader } from '../usage/account-usage.js';
import type { RequestListing } from '../usage/request-listing.js';
import type { Statements } from '../usage/statement.js';
import type { Clock, IdGenerator } from '../util/effects.js';
import type { Metrics } from './metrics.js';
import type { UploadService } from '../uploads/upload-service.js';
import type { Readiness } from './readiness.js';
import type { StreamsInFlight } from './streams-in-flight.js';

/** Everything the HTTP app needs, built by `createServices` (or by a test). */
export interface AppDeps {
  readonly config: Config;
  readonly store: Store;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly logger: FastifyBaseLogger;
  readonly metrics: Metrics;
  readonly keys: KeyService;
  /** Spend limits of keys and accounts (docs/billing.md "Budgets"). */
  readonly budgets: BudgetService;
  readonly accounts: AccountService;
  /** Who did what, when and why, through the admin API or the console (docs/audit.md). */
  readonly audit: AuditLog;
  /** Online top-up through a payment provider, when one is configured (docs/payments.md). */
  readonly payments: PaymentService;
  readonly prices: PriceBook;
  readonly catalog: ModelCatalog;
  readonly requests: RequestService;
  readonly settlements: SettlementService;
  readonly usageReviews: UsageReviewService;
  /** What was spent (docs/usage.md): a key's record list, account usage, statements. */
  readonly requestListing: RequestListing;
  readonly accountUsage: AccountUsageReader;
  readonly statements: Statements;
  readonly tasks: TaskService;
  readonly h3: H3Service;
  readonly taskSettlement: TaskSettlement;
  readonly taskOperations: TaskOperations;
  /** The task families by kind (tasks/task-family.ts); tests may register one of their own. */
  readonly taskFamilies: TaskFamilies;
  /** Reads of a task of any family by its creating key (content routes). */
  readonly taskReads: TaskReads;
  readonly providers: ProviderRegistry;
  /** Which channel serves each upstream call, with safe failover (docs/routing.md). */
  readonly channels: ChannelRouter;
  /** Present when rate limits are shared through Redis. */
  readonly redis: Redis | undefined;
  readonly assets: AssetStorage;
  /**
   * Uploads into `assets`, one for `/v1/assets` and the console alike, so that the staging limits
   * per account (`limits.staged_upload_bytes_per_account`, concurrent uploads) bind both doors.
   */
  readonly uploads: UploadService;
  /**
   * Keys the public links of shares asked for from the console (shares/share-link-secret.ts;
   * docs/decisions/0016-console-share-links.md). Never stored in the database.
   */
  readonly shareLinkSecret: Buffer;
  /** How caller-given URLs are fetched (the guarded fetch's network; tests replace it). */
  readonly fetchDeps?: GuardedFetchDeps;
  /** `undefined` disables the admin API. */
  readonly adminToken: string | undefined;
  /** When set, `/metrics` needs it as a bearer token; `undefined` leaves `/metrics` open. */
  readonly metricsToken?: string | undefined;
  /** The web console's users and sessions (docs/console.md). */
  readonly consoleUsers: ConsoleUsers;
  readonly consoleSessions: ConsoleSessions;
  /** The optional TOTP second factor of console users. */
  readonly consoleTotp: ConsoleTotp;
  /** Self sign-up, when the configuration allows it (`server.console_self_signup`). */
  readonly consoleSignUp: ConsoleSignUp;
  /** Where the built console is (default: packages/console/dist). */
  readonly consoleDir?: string;
  /** Turned to draining by a graceful shutdown: `/readyz` 503 (http/readiness.ts). */
  readonly readiness: Readiness;
  /** Streamed chats still being read upstream, their callers gone or not (closing waits for them). */
  readonly streamsInFlight: StreamsInFlight;
}
