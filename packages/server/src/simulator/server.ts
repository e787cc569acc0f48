import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dialectOfPath } from './chat-dialects.js';
import { DirectiveError } from './directives.js';
import { BadRequest } from './embeddings.js';
import { delay, parseBody, readBody, send } from './http-io.js';
import { createMediaRoutes, type MediaRoutes } from './media-routes.js';
import { callerKeyOf } from './opaque-state.js';
import { REQUEST_ID_HEADER } from '../providers/upstream-http.js';
import { REQUEST_LOOKUP_PATH, RequestLog } from './request-log.js';
import { createTextState, TEXT_ROUTES, type TextState } from './text-routes.js';
import { WireError } from './wire-error.js';

export interface SimulatorOptions {
  host?: string;
  port?: number;
  logger?: { warn(object: unknown, message?: string): void };
  /**
   * Milliseconds since the epoch; video jobs move through their states by it, and prompt-cache
   * entries expire by it. Default `Date.now`.
   */
  now?: () => number;
  /**
   * The secret behind the opaque state handed to callers (Responses `encrypted_content`,
   * Anthropic thinking signatures; opaque-state.ts). Default: 32 random bytes per start, so a
   * restarted simulator refuses the tokens of the previous one; fix it to keep them valid.
   */
  secret?: string | Buffer;
}

export interface Simulator {
  /** `http://host:port`, without `/v1`. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * The base URL a client of the simulator uses (the upstream `base_url` in a configuration):
 * its routes live under `/v1`, as at the providers it imitates.
 */
export function simulatorBaseUrl(simulator: Pick<Simulator, 'url'>): string {
  return `${simulator.url}/v1`;
}

/**
 * The built-in upstream: a real HTTP server on loopback that speaks the OpenAI chat, Responses
 * (plain and SSE), embeddings, Images and Videos protocols, the Anthropic Messages protocol and
 * the Cohere/Jina rerank protocol with deterministic outputs, and injects faults on request
 * (docs/simulator.md).
 */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  let url = '';
  const media = createMediaRoutes({ baseUrl: () => url, now: options.now ?? Date.now });
  const log = new RequestLog();
  const text = createTextState(options.secret, options.now ?? Date.now);
  const server = createServer((request, response) => {
    handle(request, response, media, log, text).catch((error: unknown) => {
      options.logger?.warn({ err: error }, 'simulator request failed');
      if (!response.headersSent)
        send(response, 500, { error: { message: 'simulator fault', type: 'server_error' } });
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve);
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  url = `http://${host}:${address.port}`;
  return {
    url,
    close: async () => {
      await media.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

async function handle(
  request: IncomingMessage,
  response: ServerResponse,
  media: MediaRoutes,
  log: RequestLog,
  text: TextState,
): Promise<void> {
  response.setHeader('x-request-id', `sim-${randomUUID()}`);
  if (await media.handle(request, response)) return;
  const named = dialectOfPath((request.url ?? '/').split('?')[0] ?? '/');
  if (named === null) {
    send(response, 404, { error: { message: 'no such dialect', type: 'invalid_request_error' } });
    return;
  }
  const { dialect, path } = named;
  const lookup = REQUEST_LOOKUP_PATH.exec(path);
  if (lookup !== null && request.method === 'GET') {
    log.answer(response, decodeURIComponent(lookup[1] ?? ''));
    return;
  }
  const header = request.headers[REQUEST_ID_HEADER];
  const recordId = typeof header === 'string' && header !== '' ? header : undefined;
  const route = TEXT_ROUTES[path];
  if (route === undefined || request.method !== 'POST') {
    send(response, 404, {
      error: { message: `no route ${request.method ?? ''} ${path}`, type: 'invalid_request_error' },
    });
    return;
  }
  let handled;
  try {
    const body = await readBody(request);
    route.headers?.(request.headers);
    handled = route.handle(parseBody(body), {
      headers: request.headers,
      callerKey: callerKeyOf(request),
      state: text,
      dialect,
    });
  } catch (error) {
    if (error instanceof WireError) {
      route.errors.refuse(response, error);
      return;
    }
    const known =
      error instanceof BadRequest ||
      error instanceof DirectiveError ||
      error instanceof SyntaxError;
    if (!known) throw error;
    route.errors.refuse(response, new WireError((error as Error).message));
    return;
  }
  const { directives } = handled;
  // Received: a hang or a delay is `in_progress` to the look-up until it ends.
  log.received(recordId);
  if (directives.hang === true) return; // never answer; the socket stays open until the client gives up
  if (directives.delayMs !== undefined) {
    // The client left during the delay: nothing to answer, nothing done.
    if (!(await delay(directives.delayMs, response))) {
      log.failed(recordId);
      return;
    }
  }
  if (directives.fail !== undefined) {
    log.failed(recordId);
    route.errors.fail(response, directives.fail);
    return;
  }
  if (directives.contextOverflow === true) {
    log.failed(recordId);
    route.errors.contextOverflow(response, dialect);
    return;
  }
  // The work is done once the answer is computed: a stream cut later was still generated (and
  // would be billed by a real upstream), so the look-up reports its usage.
  const answered = handled.answer();
  log.completed(recordId, (answered as { usage?: unknown }).usage);
  if (handled.stream !== undefined) {
    await handled.stream(response, answered);
    return;
  }
  send(response, 200, answered);
}
