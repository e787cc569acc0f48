import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DirectiveError, parseDirectives, type Directives } from './directives.js';
import { answerChat, parseChatBody } from './chat.js';
import { completionBody, streamChat } from './chat-wire.js';
import { BadRequest, embeddingsResponse, parseEmbeddingsBody } from './embeddings.js';
import { SIMULATOR_LIMITS } from './limits.js';
import { parseRerankBody, rerankResponse } from './rerank.js';
import { checkJsonShape } from '../util/json-shape.js';

export interface SimulatorOptions {
  host?: string;
  port?: number;
  logger?: { warn(object: unknown, message?: string): void };
}

export interface Simulator {
  /** `http://host:port`, without `/v1`. */
  readonly url: string;
  close(): Promise<void>;
}

/** What a route does with a parsed body: its directives, and the JSON to answer or the stream to write. */
type Handler = (body: unknown) => {
  directives: Directives;
  answer: () => unknown;
  stream?: (response: ServerResponse) => Promise<void>;
};

const routes: Record<string, Handler> = {
  '/v1/embeddings': (body) => {
    const input = parseEmbeddingsBody(body);
    const { directives, cleaned } = parseDirectives(input.texts);
    return { directives, answer: () => embeddingsResponse(input, cleaned, directives) };
  },
  '/v1/chat/completions': (body) => {
    const input = parseChatBody(body);
    const { directives, cleaned } = parseDirectives(input.texts);
    const answer = () => answerChat(input, cleaned, directives);
    if (input.stream)
      return {
        directives,
        answer,
        stream: (response) => streamChat(response, input, answer(), directives),
      };
    return { directives, answer: () => completionBody(input, answer()) };
  },
  '/v1/rerank': (body) => {
    const input = parseRerankBody(body);
    const { directives, cleaned } = parseDirectives([input.query, ...input.documents]);
    const [query = '', ...documents] = cleaned;
    return { directives, answer: () => rerankResponse(input, query, documents, directives) };
  },
};

/**
 * The built-in upstream: a real HTTP server on loopback that speaks the OpenAI chat (plain and
 * SSE) and embeddings protocols and the Cohere/Jina rerank protocol with deterministic outputs, and injects faults on request
 * (docs/simulator.md).
 */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
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
  return {
    url: `http://${host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
  response.setHeader('x-request-id', `sim-${randomUUID()}`);
  const path = (request.url ?? '/').split('?')[0] ?? '/';
  const route = routes[path];
  if (route === undefined || request.method !== 'POST') {
    send(response, 404, {
      error: { message: `no route ${request.method ?? ''} ${path}`, type: 'invalid_request_error' },
    });
    return;
  }
  let handled;
  try {
    handled = route(parseBody(await readBody(request)));
  } catch (error) {
    const known =
      error instanceof BadRequest ||
      error instanceof DirectiveError ||
      error instanceof SyntaxError;
    if (!known) throw error;
    send(response, 400, {
      error: { message: (error as Error).message, type: 'invalid_request_error' },
    });
    return;
  }
  const { directives } = handled;
  if (directives.hang === true) return; // never answer; the socket stays open until the client gives up
  if (directives.delayMs !== undefined) {
    // The client left during the delay: nothing to answer.
    if (!(await delay(directives.delayMs, response))) return;
  }
  if (directives.fail !== undefined) {
    send(response, directives.fail, {
      error: { message: `simulated failure ${directives.fail}`, type: 'simulated_error' },
    });
    return;
  }
  if (handled.stream !== undefined) {
    await handled.stream(response);
    return;
  }
  send(response, 200, handled.answer());
}

/** JSON within the simulator's depth and item limits (beyond them, later work overflows or drags). */
function parseBody(text: string): unknown {
  const problem = checkJsonShape(text, {
    maxDepth: SIMULATOR_LIMITS.jsonDepth,
    maxItems: SIMULATOR_LIMITS.jsonItems,
  });
  if (problem?.kind === 'depth')
    throw new BadRequest(`body nests deeper than ${SIMULATOR_LIMITS.jsonDepth} levels`);
  if (problem?.kind === 'items')
    throw new BadRequest(`body holds more than ${SIMULATOR_LIMITS.jsonItems} JSON items`);
  return JSON.parse(text) as unknown;
}

/**
 * Waits `ms`; true when the time passed, false as soon as the client goes away (so a parsed
 * body is not kept for minutes for nobody).
 */
function delay(ms: number, response: ServerResponse): Promise<boolean> {
  return new Promise((resolve) => {
    const finish = (elapsed: boolean) => {
      clearTimeout(timer);
      response.off('close', left);
      resolve(elapsed);
    };
    const left = () => finish(false);
    const timer = setTimeout(() => finish(true), ms);
    response.once('close', left);
  });
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > SIMULATOR_LIMITS.bodyBytes) {
        reject(new BadRequest('body too large'));
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function send(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
}
