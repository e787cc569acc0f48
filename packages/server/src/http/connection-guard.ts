import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyHttpOptions } from 'fastify';
import type { ServerLimits } from '../config/schema.js';

/**
 * What one client may make the process hold: connections (in all and per client address), time
 * to send headers, silence inside a body, and the whole request. Node's own `headersTimeout`
 * does not close a connection that never sends a byte, and an early answer (401, 413, 415) does
 * not stop a body from trickling in, so both are enforced here. Threats and defaults:
 * docs/security.md.
 */
export function serverOptions(limits: ServerLimits): FastifyHttpOptions<Server> {
  return {
    requestTimeout: limits.request_timeout_ms,
    keepAliveTimeout: limits.keep_alive_timeout_ms,
    maxRequestsPerSocket: limits.max_requests_per_socket,
    // Node checks requestTimeout on this interval: keep it well below the timeout itself.
    http: {
      connectionsCheckingInterval: Math.min(1_000, limits.request_timeout_ms),
    },
  };
}

export interface ConnectionCounts {
  readonly open: number;
  readonly addresses: number;
  readonly refused: number;
}

/** Installs the caps and deadlines on the app's server. Call before it listens. */
export function guardConnections(server: Server, limits: ServerLimits): () => ConnectionCounts {
  server.maxConnections = limits.max_connections;
  const perAddress = new Map<string, number>();
  let open = 0;
  let refused = 0;

  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? 'unknown';
    const count = perAddress.get(address) ?? 0;
    if (count >= limits.max_connections_per_address) {
      refused += 1;
      socket.destroy();
      return;
    }
    perAddress.set(address, count + 1);
    open += 1;
    socket.once('close', () => {
      open -= 1;
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left <= 0) perAddress.delete(address);
      else perAddress.set(address, left);
    });
    armHeadersDeadline(socket, limits.headers_timeout_ms);
    socket.once('close', () => clearHeadersDeadline(socket));
  });

  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket;
    clearHeadersDeadline(socket);
    if (!request.complete) watchBodySilence(request, socket, limits.body_idle_timeout_ms);
    // The next request on a kept-alive connection gets its own headers deadline.
    response.once('finish', () => {
      if (!socket.destroyed) armHeadersDeadline(socket, limits.headers_timeout_ms);
    });
  });

  return () => ({ open, addresses: perAddress.size, refused });
}

const headersDeadlines = new WeakMap<Socket, NodeJS.Timeout>();

function armHeadersDeadline(socket: Socket, ms: number): void {
  clearHeadersDeadline(socket);
  const timer = setTimeout(() => socket.destroy(), ms);
  timer.unref();
  headersDeadlines.set(socket, timer);
}

function clearHeadersDeadline(socket: Socket): void {
  const timer = headersDeadlines.get(socket);
  if (timer === undefined) return;
  clearTimeout(timer);
  headersDeadlines.delete(socket);
}

/**
 * Closes the connection when the body goes silent for `ms`. Only while the body arrives: once it
 * is complete, a slow upstream answer must not cut the caller off (upstream timeouts bound it).
 */
function watchBodySilence(request: IncomingMessage, socket: Socket, ms: number): void {
  const onTimeout = () => socket.destroy();
  socket.setTimeout(ms, onTimeout);
  const stop = () => {
    socket.setTimeout(0);
    socket.off('timeout', onTimeout);
  };
  request.once('end', stop);
  request.once('close', stop);
}
