import type { AppDeps } from '../deps.js';

/** What the console's routes use: the app's services (no money rule of its own). */
export type ConsoleDeps = Pick<
  AppDeps,
  | 'config'
  | 'store'
  | 'assets'
  | 'taskSettlement'
  | 'taskFamilies'
  | 'settlements'
  | 'requests'
  | 'accountUsage'
  | 'clock'
  | 'accounts'
  | 'keys'
  | 'requestListing'
  | 'consoleUsers'
  | 'consoleSessions'
  | 'consoleTotp'
  | 'consoleSignUp'
  | 'catalog'
  | 'prices'
  | 'consoleDir'
>;
