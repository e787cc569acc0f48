import http from 'node:http';
import { freePort } from './processes.js';

/**
 * A loopback proxy between gateways and a simulator process (`tollgate sim`). It outlives every gateway,
 * so it counts every video submission (`POST /v1/videos`) by its `Idempotency-Key` (our task
 * id) whichever process sent it. While `holdAnswers` is set it forwards a submission (the
 * simulator creates the job) but never returns the answer: the gateway is then killed between
 * sending and hearing back, the worst moment for a "submit once" promise.
 */
export async function countingProxy(simulatorPort: number) {
  const submissions = new Map<string, number>();
  const state = { holdAnswers: false, held: 0 };
  const server = http.createServer((request, response) => {
    const isSubmission = request.method === 'POST' && request.url === '/v1/videos';
    const key = request.headers['idempotency-key'];
    if (isSubmission && typeof key === 'string')
      submissions.set(key, (submissions.get(key) ?? 0) + 1);
    const hold = isSubmission && state.holdAnswers;
    const upstream = http.request(
      {
        host: '127.0.0.1',
        port: simulatorPort,
        method: request.method,
        path: request.url,
        headers: request.headers,
      },
      (answer) => {
        if (hold) {
          state.held += 1;
          answer.resume();
          return;
        }
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    upstream.on('error', () => response.destroy());
    request.on('error', () => upstream.destroy());
    response.on('error', () => upstream.destroy());
    request.pipe(upstream);
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port,
    submissions,
    state,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
