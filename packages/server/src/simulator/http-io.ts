import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseRange } from '../assets/range.js';
import { checkJsonShape } from '../util/json-shape.js';
import { BadRequest } from './embeddings.js';
import { SIMULATOR_LIMITS } from './limits.js';

/** Reads the request body as UTF-8 text; throws `BadRequest` past the simulator's body limit. */
export function readBody(request: IncomingMessage): Promise<string> {
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

/** JSON within the simulator's depth and item limits (beyond them, later work overflows or drags). */
export function parseBody(text: string): unknown {
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
export function delay(ms: number, response: ServerResponse): Promise<boolean> {
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

export function send(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    ...headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
}

/** An OpenAI-style error body: `{"error": {"code", "message", "type"}}`. */
export function sendError(
  response: ServerResponse,
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  const type = status < 500 ? 'invalid_request_error' : 'server_error';
  send(response, status, { error: { code, message, type } }, headers);
}

/**
 * Serves bytes held in memory, with a single `Range` honoured (206), an unsatisfiable one
 * answered 416, and HEAD answered with the headers alone.
 */
export function sendBytes(
  request: IncomingMessage,
  response: ServerResponse,
  bytes: Buffer,
  contentType: string,
): void {
  const range = parseRange(request.headers.range, bytes.length);
  const common = { 'content-type': contentType, 'accept-ranges': 'bytes' };
  if (range.kind === 'unsatisfiable') {
    response.writeHead(416, { ...common, 'content-range': `bytes */${bytes.length}` });
    response.end();
    return;
  }
  const part = range.kind === 'single' ? bytes.subarray(range.start, range.end + 1) : bytes;
  response.writeHead(range.kind === 'single' ? 206 : 200, {
    ...common,
    'content-length': part.length,
    ...(range.kind === 'single'
      ? { 'content-range': `bytes ${range.start}-${range.end}/${bytes.length}` }
      : {}),
  });
  response.end(request.method === 'HEAD' ? undefined : part);
}
