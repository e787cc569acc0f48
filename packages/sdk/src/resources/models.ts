import type { ModelList } from '@tollgate/protocol';
import type { Transport } from '../http.js';
import type { CallOptions } from '../types.js';
import { callOptions } from './shared.js';

/** `GET /v1/models`: the models this key may call, with their capabilities and prices. */
export class Models {
  constructor(private readonly transport: Transport) {}

  async list(options: CallOptions = {}): Promise<ModelList> {
    const { data } = await this.transport.json<ModelList>({
      method: 'GET',
      path: '/models',
      ...callOptions(options),
    });
    return data;
  }
}
