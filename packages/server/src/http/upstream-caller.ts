import type { FastifyReply, FastifyRequest } from 'fastify';
import type { UpstreamCaller } from '../providers/upstream-http.js';
import { principalOf } from './plugins/authenticate.js';

/**
 * The caller a route sends upstream for: its account (fair admission to the upstream pool) and
 * a signal that fires if the caller goes away before the answer, so that a request still
 * waiting for an upstream connection is dropped unsent (record `failed`, hold released) instead
 * of being sent for nobody. Once sent, the work goes on: the record keeps the outcome. Every
 * call names the record it is made for (`X-Tollgate-Request-Id`).
 */
export function upstreamCaller(request: FastifyRequest, reply: FastifyReply): UpstreamCaller {
  const gone = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) gone.abort();
  });
  // The record's id is the request's id: an upstream with `request_lookup` is asked by it later.
  return {
    accountId: principalOf(request).accountId,
    abandoned: gone.signal,
    requestId: request.id,
  };
}
