import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CallerPresence } from '../providers/caller-presence.js';
import type { UpstreamCaller } from '../providers/upstream-http.js';
import { principalOf } from './plugins/authenticate.js';

/**
 * The caller a route sends upstream for: its account (fair admission to the upstream pool) and
 * its presence, which says if the caller goes away before the answer, so that a request still
 * waiting for an upstream connection is dropped unsent (record `failed`, hold released) instead
 * of being sent for nobody. Once sent, the work goes on: the record keeps the outcome. Every
 * call names the record it is made for (`X-Tollgate-Request-Id`).
 */
export function upstreamCaller(request: FastifyRequest, reply: FastifyReply): UpstreamCaller {
  // The record's id is the request's id: an upstream with `request_lookup` is asked by it later.
  return {
    accountId: principalOf(request).accountId,
    presence: responsePresence(reply.raw),
    requestId: request.id,
  };
}

/**
 * The caller is gone when its response closed before it was finished (the connection dropped).
 * Read from the response's own state, and listened to only on demand (caller-presence.ts).
 */
function responsePresence(response: ServerResponse): CallerPresence {
  const gone = () => response.closed && !response.writableFinished;
  return {
    get gone() {
      return gone();
    },
    whenGone(listener) {
      if (response.closed) return () => {};
      const onClose = () => {
        if (gone()) listener();
      };
      response.once('close', onClose);
      return () => response.removeListener('close', onClose);
    },
  };
}
