import { assetMessages } from './assets.js';
import { callerMessages } from './caller.js';
import { coreMessages } from './core.js';
import { modelMessages } from './models.js';
import { operatorMessages } from './operator.js';
import { operatorDashboardMessages } from './operator-dashboard.js';
import { operatorReviewMessages } from './operator-review.js';
import { operatorUserMessages } from './operator-users.js';
import { paymentMessages } from './payments.js';
import { securityMessages } from './security.js';
import { valueMessages } from './values.js';
import { walletMessages } from './wallet.js';
import type { Language, MessageTable } from './table.js';

export { LANGUAGES, type Language, type MessageTable } from './table.js';

/**
 * The console's one message registry (packages/console/README.md, "Messages"): every file of
 * this folder is a `MessageTable` of one domain, joined here; pages read them through `t` of
 * `useI18n()` (i18n.tsx). A new domain is a new file, added to `PARTS`.
 */
const PARTS = [
  coreMessages,
  callerMessages,
  assetMessages,
  modelMessages,
  securityMessages,
  paymentMessages,
  walletMessages,
  operatorMessages,
  operatorReviewMessages,
  operatorUserMessages,
  operatorDashboardMessages,
  valueMessages,
] as const;

/** The keys of each part of a union (`keyof` of a union would give only the common ones). */
type KeysOf<Part> = Part extends unknown ? keyof Part : never;

/** The keys two parts both define (the later would silently win): must be none. */
type Clashes<Parts extends readonly MessageTable[]> = {
  [Index in keyof Parts]: keyof Parts[Index] & KeysOf<Exclude<Parts[number], Parts[Index]>>;
}[number];
// Fails to type-check, naming the key, when two files define the same key.
const noClash: [Clashes<typeof PARTS>] extends [never] ? true : Clashes<typeof PARTS> = true;
void noClash;

/** Every message of every part, by key. */
const MESSAGES: MessageTable = Object.fromEntries(PARTS.flatMap((part) => Object.entries(part)));

/** Every message key of the console. */
export type MessageKey = KeysOf<(typeof PARTS)[number]>;

/**
 * A message in a language. A key the registry lacks (a state a newer server sends, read through
 * a template such as `state.${status}`) shows as the key itself rather than as nothing.
 */
export function messageText(key: MessageKey, language: Language): string {
  return MESSAGES[key]?.[language] ?? key;
}
