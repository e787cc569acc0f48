import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * How a front answers: `pass` forwards to the simulator; a number answers that status before
 * doing anything; `hang` reads the request and never answers (a timeout after sending);
 * `drop` reads the request and closes the connection (a dropped connection); `garbage`
 * answers 200 with a body that is not JSON.
 */
export type FrontMode = 'pass' | number | 'hang' | 'drop' | 'garbage';

/**
 * A loopback HTTP server in front of the simulator, standing for one upstream account: it
 * counts the requests that reached it and fails them as told, so a test sees exactly which
 * channels were called and how often.
 */
export interface FaultFront {
  /** The base URL to configure (`.../v1`). */
  readonly url: string;
  /** Requests that reached this front (whatever it then did with them). */
  calls: number;
  /** Each of those requests as `METHOD /path` (without `/v1`), in order. */
  readonly requests: string[];
  mode: FrontMode;
  close(): Promise<void>;
}

export async function startFaultFront(simulatorUrl: string): Promise<FaultFront> {
  const sockets = new Set<Socket>();
  const front: FaultFront = {
    url: '',
    calls: 0,
    requests: [],
    mode: 'pass',
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((request, response) => {
    front.calls += 1;
    front.requests.push(`${request.method ?? 'GET'} ${(request.url ?? '/').replace(/^\/v1/, '')}`);
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => void answer(front.mode, request, Buffer.concat(chunks), response));
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(front, { url: `http://127.0.0.1:${port}/v1` });

  async function answer(
    mode: FrontMode,
    request: IncomingMessage,
    body: Buffer,
    response: ServerResponse,
  ): Promise<void> {
    if (mode === 'hang') return;
    if (mode === 'drop') return void request.socket.destroy();
    if (typeof mode === 'number') {
      response.writeHead(mode, { 'content-type': 'application/json' });
      return void response.end(JSON.stringify({ error: { message: `front ${mode}` } }));
    }
    if (mode === 'garbage') {
      response.writeHead(200, { 'content-type': 'application/json' });
      return void response.end('not json');
    }
    const path = (request.url ?? '/').replace(/^\/v1/, '');
    try {
      const upstream = await fetch(`${simulatorUrl}/v1${path}`, {
        method: request.method ?? 'GET',
        headers: { 'content-type': 'application/json', accept: request.headers.accept ?? '*/*' },
        ...(body.length === 0 ? {} : { body }),
      });
      response.writeHead(upstream.status, {
        'content-type': upstream.headers.get('content-type') ?? 'application/json',
      });
      if (upstream.body === null) return void response.end();
      for await (const chunk of upstream.body) response.write(chunk);
      response.end();
    } catch {
      // The simulator cut the connection (`[sim:cut_after]`): the caller sees the same cut.
      request.socket.destroy();
    }
  }
}

/** A base URL where nothing listens: connecting is refused. */
export async function refusedUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/v1`;
}
