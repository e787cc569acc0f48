import type { Migration, MigrationProvider } from 'kysely';
import * as initial from './001-initial.js';
import * as chat from './002-chat.js';
import * as assets from './003-assets.js';
import * as assetUses from './004-asset-uses.js';
import * as assetObjects from './005-asset-objects.js';
import * as keyRotation from './006-key-rotation.js';
import * as moneyBounds from './007-money-bounds.js';
import * as usageReview from './008-usage-review.js';
import * as tasks from './009-tasks.js';
import * as shares from './010-shares.js';
import * as h3Refresh from './011-h3-refresh.js';
import * as spendListings from './012-spend-listings.js';
import * as consoleUsers from './013-console-users.js';
import * as taskClaims from './014-task-claims.js';
import * as onePendingShare from './015-one-pending-share.js';
import * as settlementWindow from './017-settlement-window.js';
import * as channels from './018-channels.js';
import * as budgets from './019-budgets.js';
import * as auditLog from './020-audit-log.js';
import * as cacheChangeNotices from './023-cache-change-notices.js';
import * as resultSources from './024-result-sources.js';
import * as channelCost from './025-channel-cost.js';
import * as paymentOrders from './026-payment-orders.js';
import * as shareTokenSource from './027-share-token-source.js';
import * as hotPathIndexes from './030-hot-path-indexes.js';
import * as unfinishedRecordIndexes from './031-unfinished-record-indexes.js';
import * as refusalFunction from './032-refusal-function.js';
import * as deploymentSettings from './033-deployment-settings.js';
import * as consoleEmailCanonical from './034-console-email-canonical.js';
import * as refundOwed from './036-refund-owed.js';
import * as keyIdempotency from './037-key-idempotency.js';
import * as responseTurns from './038-response-turns.js';
import * as billLineItems from './039-bill-line-items.js';
import * as operatorDashboard from './040-operator-dashboard.js';
import * as eventLog from './041-event-log.js';

/**
 * Versioned migrations, applied in name order at start. Never edit a released migration: add
 * the next one.
 */
const migrations: Record<string, Migration> = {
  '001-initial': initial,
  '002-chat': chat,
  '003-assets': assets,
  '004-asset-uses': assetUses,
  '005-asset-objects': assetObjects,
  '006-key-rotation': keyRotation,
  '007-money-bounds': moneyBounds,
  '008-usage-review': usageReview,
  '009-tasks': tasks,
  '010-shares': shares,
  '011-h3-refresh': h3Refresh,
  '012-spend-listings': spendListings,
  '013-console-users': consoleUsers,
  '014-task-claims': taskClaims,
  '015-one-pending-share': onePendingShare,
  '017-settlement-window': settlementWindow,
  '018-channels': channels,
  '019-budgets': budgets,
  '020-audit-log': auditLog,
  '023-cache-change-notices': cacheChangeNotices,
  '024-result-sources': resultSources,
  '025-channel-cost': channelCost,
  '026-payment-orders': paymentOrders,
  '027-share-token-source': shareTokenSource,
  '030-hot-path-indexes': hotPathIndexes,
  '031-unfinished-record-indexes': unfinishedRecordIndexes,
  '032-refusal-function': refusalFunction,
  '033-deployment-settings': deploymentSettings,
  '034-console-email-canonical': consoleEmailCanonical,
  '036-refund-owed': refundOwed,
  '037-key-idempotency': keyIdempotency,
  '038-response-turns': responseTurns,
  '039-bill-line-items': billLineItems,
  '040-operator-dashboard': operatorDashboard,
  '041-event-log': eventLog,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: () => Promise.resolve(migrations),
};
