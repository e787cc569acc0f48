import type { Account, CallerAccount } from '@tollgate/protocol';
import type { Transport } from '../http.js';
import type { CallOptions, PostOptions } from '../types.js';
import { businessOptions, callOptions } from './shared.js';

/** The caller's own account (personal keys): balance, and top-up by redemption code. */
export class AccountResource {
  constructor(private readonly transport: Transport) {}

  /**
   * `GET /v1/account`: `balance`, `held` and `available`, in micro-yuan, the account's `budget`
   * and the calling key's own `key_budget`.
   */
  async get(options: CallOptions = {}): Promise<CallerAccount> {
    const { data } = await this.transport.json<CallerAccount>({
      method: 'GET',
      path: '/account',
      ...callOptions(options),
    });
    return data;
  }

  /** `POST /v1/redemptions`: redeems a top-up code once; answers the account. */
  async redeem(code: string, options: PostOptions = {}): Promise<Account> {
    const { data } = await this.transport.json<Account>({
      method: 'POST',
      path: '/redemptions',
      json: { code },
      ...businessOptions(options),
    });
    return data;
  }
}
