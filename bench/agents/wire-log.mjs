// A recording pass-through between one agent and the gateway (bench/agents/run.sh): every request
// is forwarded as it comes (method, path, headers, body) and its answer streamed back chunk by
// chunk (SSE stays live), and each exchange is appended to LOG as one JSON line: the request's
// headers (credentials blanked) and body, the answer's status, headers and body (the first
// 1 MiB). So a failing turn shows exactly what the agent sent and what the gateway answered.
//
//   node wire-log.mjs GATEWAY_PORT LOG PORT_FILE      (writes its own port to PORT_FILE)
import { Buffer } from 'node:buffer';
import { appendFileSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';

const [gatewayPort, log, portFile] = process.argv.slice(2);
const KEEP = 1 << 20;
const SECRET = /^(authorization|x-api-key|proxy-authorization)$/i;

function blank(headers) {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [
      name,
      SECRET.test(name) ? `[blanked …${String(value).slice(-4)}]` : value,
    ]),
  );
}

function parsed(buffer) {
  const text = buffer.toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

const server = createServer((incoming, outgoing) => {
  const started = Date.now();
  const sent = [];
  const answer = [];
  let answerBytes = 0;
  const entry = {
    at: new Date(started).toISOString(),
    method: incoming.method,
    url: incoming.url,
    request_headers: blank(incoming.headers),
  };
  const write = (extra) =>
    appendFileSync(log, JSON.stringify({ ...entry, ...extra, ms: Date.now() - started }) + '\n');
  const upstream = request(
    {
      host: '127.0.0.1',
      port: Number(gatewayPort),
      method: incoming.method,
      path: incoming.url,
      headers: incoming.headers,
    },
    (response) => {
      outgoing.writeHead(response.statusCode, response.rawHeaders);
      response.on('data', (chunk) => {
        if (answerBytes < KEEP) answer.push(chunk);
        answerBytes += chunk.length;
        outgoing.write(chunk);
      });
      response.on('end', () => {
        outgoing.end();
        write({
          request_body: parsed(Buffer.concat(sent)),
          status: response.statusCode,
          response_headers: response.headers,
          response_body: Buffer.concat(answer).toString('utf8'),
          response_bytes: answerBytes,
        });
      });
      response.on('error', (error) => {
        outgoing.destroy(error);
        write({
          request_body: parsed(Buffer.concat(sent)),
          status: response.statusCode,
          error: `answer cut: ${error.message}`,
        });
      });
    },
  );
  upstream.on('error', (error) => {
    write({
      request_body: parsed(Buffer.concat(sent)),
      error: `gateway unreachable: ${error.message}`,
    });
    if (!outgoing.headersSent) outgoing.writeHead(502, { 'content-type': 'text/plain' });
    outgoing.end(`wire-log: ${error.message}`);
  });
  incoming.on('data', (chunk) => {
    sent.push(chunk);
    upstream.write(chunk);
  });
  incoming.on('end', () => upstream.end());
  // A caller that goes away mid-stream: let the gateway see it too.
  outgoing.on('close', () => {
    if (!outgoing.writableFinished) upstream.destroy();
  });
});

server.listen(0, '127.0.0.1', () => writeFileSync(portFile, String(server.address().port)));
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => process.exit(0));
