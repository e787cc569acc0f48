import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Simulator } from '../../src/simulator/server.js';

/** Where the simulator answers as real Volcengine Ark (simulator/h3-ark.ts). */
const ARK_BASE = '/dialect/ark/v1';
const TASK_READ = /^\/contents\/generations\/tasks\/[^/?]+$/;

/** One request that reached the front: path and query without the Ark base, and what came back. */
export interface ArkFrontRequest {
  readonly method: string;
  readonly path: string;
  /** The upstream's status; null when the front cut the connection instead of answering. */
  readonly status: number | null;
  /** For a task read: the task's `status` as answered. */
  readonly taskStatus?: string;
}

/**
 * A loopback front standing for Volcengine Ark between a gateway and the simulator's Ark
 * routes: it records every request (so a test sees which were made, and which never were), and
 * can lose the answer of a submission after the simulator made the job, or rewrite a task as
 * real Ark would answer it in a form the simulator does not produce.
 */
export interface ArkFront {
  /** The base URL to configure for the upstream (`…/dialect/ark/v1`). */
  readonly url: string;
  readonly requests: ArkFrontRequest[];
  /**
   * `pass` forwards submissions; `reset_after_send` forwards one (the job is made upstream),
   * then resets the connection instead of answering: a create whose answer was lost.
   */
  submission: 'pass' | 'reset_after_send';
  /** Applied to each task read on its way back (e.g. `frames` in place of `duration`). */
  rewriteTask: ((task: Record<string, unknown>) => Record<string, unknown>) | undefined;
  /** When set, every video download is answered with this status instead of the file. */
  videoStatus: number | undefined;
  close(): Promise<void>;
}

export async function startArkFront(simulator: Simulator): Promise<ArkFront> {
  const sockets = new Set<Socket>();
  let origin = '';
  const front: ArkFront = {
    url: '',
    requests: [],
    submission: 'pass',
    rewriteTask: undefined,
    videoStatus: undefined,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      forward(request, Buffer.concat(chunks), response).catch(() => request.socket.destroy());
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(front, { url: `${origin}${ARK_BASE}` });

  async function forward(request: IncomingMessage, body: Buffer, response: ServerResponse) {
    const method = request.method ?? 'GET';
    const path = (request.url ?? '/').replace(ARK_BASE, '');
    if (front.videoStatus !== undefined && path.includes('/video.mp4')) {
      front.requests.push({ method, path, status: front.videoStatus });
      response.writeHead(front.videoStatus, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { code: 'front', message: 'video refused' } }));
      return;
    }
    const headers: Record<string, string> = {};
    for (const name of ['content-type', 'authorization', 'idempotency-key', 'range', 'accept']) {
      const value = request.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    const answer = await fetch(`${simulator.url}${request.url ?? '/'}`, {
      method,
      headers,
      ...(body.length === 0 ? {} : { body }),
    });
    if (method === 'POST' && front.submission === 'reset_after_send') {
      // The simulator made the job; its answer never reaches the gateway.
      await answer.arrayBuffer();
      front.requests.push({ method, path, status: null });
      request.socket.resetAndDestroy();
      return;
    }
    const type = answer.headers.get('content-type') ?? 'application/octet-stream';
    if (!type.startsWith('application/json')) {
      front.requests.push({ method, path, status: answer.status });
      response.writeHead(answer.status, { 'content-type': type });
      response.end(Buffer.from(await answer.arrayBuffer()));
      return;
    }
    // The simulator's URLs name its own origin: they are this front's to the gateway.
    const text = (await answer.text()).split(simulator.url).join(origin);
    let json = JSON.parse(text) as Record<string, unknown>;
    const taskRead = method === 'GET' && TASK_READ.test(path) && answer.status === 200;
    if (taskRead && front.rewriteTask !== undefined) json = front.rewriteTask(json);
    front.requests.push({
      method,
      path,
      status: answer.status,
      ...(taskRead ? { taskStatus: String(json['status']) } : {}),
    });
    response.writeHead(answer.status, { 'content-type': type });
    response.end(JSON.stringify(json));
  }
}
