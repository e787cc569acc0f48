import { call, type ApiKey, type ConsoleUser, type SessionState } from './api.js';

/**
 * The console calls of the security page, self sign-up and the keys page's options
 * (docs/console.md): sessions, password, the TOTP factor, sign-up, key rotation, models.
 */

export interface ConsoleSessionView {
  id: string;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
  address: string;
  user_agent: string;
  current: boolean;
}

/** What `GET /console/api/session` says of the user, with the factor's state. */
export type SecurityUser = ConsoleUser & { totp_enabled: boolean };

/** A model a key may be allowed (`GET /console/api/models`, as `GET /v1/models`). */
export interface ModelEntry {
  id: string;
  capabilities: { families: string[] };
}

/** What the create form adds to a name: `models` (`null`: every model) and `expires_at`. */
export interface KeyOptions {
  models: string[] | null;
  expires_at: string | null;
}

export const securityApi = {
  config: () => call<{ self_signup: boolean }>('GET', '/config'),
  signUp: (email: string, password: string) =>
    call<SessionState>('POST', '/signup', { email, password }),
  user: () => call<{ user: SecurityUser }>('GET', '/session').then((state) => state.user),
  sessions: () => call<{ data: ConsoleSessionView[] }>('GET', '/sessions'),
  revokeSession: (id: string) => call<undefined>('DELETE', `/sessions/${encodeURIComponent(id)}`),
  changePassword: (current: string, next: string) =>
    call<undefined>('POST', '/password', { current_password: current, new_password: next }),
  totpSetup: () => call<{ secret: string; otpauth_url: string }>('POST', '/totp'),
  totpEnable: (code: string) => call<undefined>('POST', '/totp/enable', { code }),
  /** Proved with a current code, or with the password when `code` is empty. */
  totpDisable: (code: string, password: string) =>
    call<undefined>('DELETE', '/totp', code === '' ? { password } : { code }),
  models: () => call<{ data: ModelEntry[] }>('GET', '/models'),
  createKey: (name: string, options: KeyOptions) =>
    call<ApiKey & { key: string }>('POST', '/keys', {
      name,
      ...(options.models === null ? {} : { models: options.models }),
      ...(options.expires_at === null ? {} : { expires_at: options.expires_at }),
    }),
  rotateKey: (id: string) =>
    call<ApiKey & { key: string }>('POST', `/keys/${encodeURIComponent(id)}/rotate`),
};
