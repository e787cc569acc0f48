import type {
  ConsoleConfig,
  ConsoleKeyCreateBody,
  ConsolePasswordBody,
  ConsoleSessionList,
  ConsoleSessionState,
  ConsoleSignUpBody,
  ConsoleTotpEnableBody,
  ConsoleTotpRemovalBody,
  ConsoleTotpSetup,
  ModelList,
  NewApiKey,
  RotatedApiKey,
} from '@tollgate/protocol';
import { request } from './api.js';

/** What the key create form sends beside the name (pages/KeyCreateOptions.tsx `keyOptionsOf`). */
export type KeyOptions = Omit<ConsoleKeyCreateBody, 'name'>;

/**
 * The console calls of the security page, self sign-up and the keys page's options
 * (docs/console.md): sessions, password, the TOTP factor, sign-up, key creation and rotation,
 * and the models a key may be allowed (`GET /console/api/models`, as `GET /v1/models`).
 */
export const securityApi = {
  config: () => request<ConsoleConfig>('GET', '/config'),
  signUp: (email: string, password: string) =>
    request<ConsoleSessionState>('POST', '/signup', {
      body: { email, password } satisfies ConsoleSignUpBody,
    }),
  /** The signed-in user, with the state of the second factor (`totp_enabled`). */
  user: () => request<ConsoleSessionState>('GET', '/session').then((state) => state.user),
  sessions: () => request<ConsoleSessionList>('GET', '/sessions'),
  revokeSession: (id: string) =>
    request<undefined>('DELETE', `/sessions/${encodeURIComponent(id)}`),
  changePassword: (current: string, next: string) =>
    request<undefined>('POST', '/password', {
      body: { current_password: current, new_password: next } satisfies ConsolePasswordBody,
    }),
  totpSetup: () => request<ConsoleTotpSetup>('POST', '/totp'),
  totpEnable: (code: string) =>
    request<undefined>('POST', '/totp/enable', { body: { code } satisfies ConsoleTotpEnableBody }),
  /** Proved with a current code, or with the password when `code` is empty. */
  totpDisable: (code: string, password: string) =>
    request<undefined>('DELETE', '/totp', {
      body: (code === '' ? { password } : { code }) satisfies ConsoleTotpRemovalBody,
    }),
  models: () => request<ModelList>('GET', '/models'),
  createKey: (name: string, options: KeyOptions) =>
    request<NewApiKey>('POST', '/keys', {
      body: { name, ...options } satisfies ConsoleKeyCreateBody,
    }),
  rotateKey: (id: string) =>
    request<RotatedApiKey>('POST', `/keys/${encodeURIComponent(id)}/rotate`),
};
