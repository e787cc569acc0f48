import type { ServerResponse } from 'node:http';
import { send } from './http-io.js';
import { SIMULATOR_LIMITS } from './limits.js';

/** What became of one text call, as the request look-up reports it (docs/simulator.md). */
type Entry =
  | { readonly status: 'in_progress' }
  | { readonly status: 'failed' }
  | { readonly status: 'completed'; readonly usage: unknown };

/** The look-up's path, under the simulator's `/v1`: the contract of `request_lookup`. */
export const REQUEST_LOOKUP_PATH = /^\/v1\/tollgate\/requests\/([^/]+)$/;

/**
 * The text calls (chat, embeddings, rerank) that named their gateway record
 * (`X-Tollgate-Request-Id`), by that id: received (`in_progress`), answered with usage
 * (`completed`), or refused (`failed`). Bounded (oldest forgotten first). It is what the
 * `request_lookup` capability asks (requests/request-reconciler.ts).
 */
export class RequestLog {
  private readonly entries = new Map<string, Entry>();

  received(id: string | undefined): void {
    this.set(id, { status: 'in_progress' });
  }

  completed(id: string | undefined, usage: unknown): void {
    this.set(id, { status: 'completed', usage: usage ?? null });
  }

  failed(id: string | undefined): void {
    this.set(id, { status: 'failed' });
  }

  /** `GET /v1/tollgate/requests/{id}`: 200 with the entry, 404 for an id never received. */
  answer(response: ServerResponse, id: string): void {
    const entry = this.entries.get(id);
    if (entry === undefined) {
      send(response, 404, {
        error: { code: 'not_found', message: `no request ${id} was received`, type: 'not_found' },
      });
      return;
    }
    send(response, 200, {
      object: 'tollgate.request',
      id,
      status: entry.status,
      usage: entry.status === 'completed' ? entry.usage : null,
    });
  }

  private set(id: string | undefined, entry: Entry): void {
    if (id === undefined) return;
    this.entries.delete(id);
    this.entries.set(id, entry);
    if (this.entries.size <= SIMULATOR_LIMITS.lookupRequests) return;
    const oldest = this.entries.keys().next().value;
    if (oldest !== undefined) this.entries.delete(oldest);
  }
}
