import type { ModelList } from '@tollgate/protocol';
import { request } from './api.js';
import type {
  ApiKey,
  ConsoleConfig,
  ConsoleSession,
  KeyOptions,
  List,
  NewApiKey,
  SessionState,
  TotpSetup,
} from './console-types.js';

/**
 * The console calls of the security page, self sign-up and the keys page's options
 * (docs/console.md): sessions, password, the TOTP factor, sign-up, key creation and rotation,
 * and the models a key may be allowed (`GET /console/api/models`, as `GET /v1/models`).
 */
export const securityApi = {
  config: () => request<ConsoleConfig>('GET', '/config'),
  signUp: (email: string, password: string) =>
    request<SessionState>('POST', '/signup', { body: { email, password } }),
  /** The signed-in user, with the state of the second factor (`totp_enabled`). */
  user: () => request<SessionState>('GET', '/session').then((state) => state.user),
  sessions: () => request<List<ConsoleSession>>('GET', '/sessions'),
  revokeSession: (id: string) =>
    request<undefined>('DELETE', `/sessions/${encodeURIComponent(id)}`),
  changePassword: (current: string, next: string) =>
    request<undefined>('POST', '/password', {
      body: { current_password: current, new_password: next },
    }),
  totpSetup: () => request<TotpSetup>('POST', '/totp'),
  totpEnable: (code: string) => request<undefined>('POST', '/totp/enable', { body: { code } }),
  /** Proved with a current code, or with the password when `code` is empty. */
  totpDisable: (code: string, password: string) =>
    request<undefined>('DELETE', '/totp', { body: code === '' ? { password } : { code } }),
  models: () => request<ModelList>('GET', '/models'),
  createKey: (name: string, options: KeyOptions) =>
    request<NewApiKey>('POST', '/keys', {
      body: {
        name,
        ...(options.models === null ? {} : { models: options.models }),
        ...(options.expires_at === null ? {} : { expires_at: options.expires_at }),
      },
    }),
  rotateKey: (id: string) =>
    request<NewApiKey & { replaces: ApiKey }>('POST', `/keys/${encodeURIComponent(id)}/rotate`),
};
