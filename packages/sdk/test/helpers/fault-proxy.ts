import net from 'node:net';

/**
 * A loopback TCP proxy that forwards each request to `target` and, as soon as the first bytes
 * of the answer come back (so the request was sent and taken), destroys the client's socket:
 * "the connection dropped after the request was sent". The answer never reaches the client.
 */
export async function startDropAfterSendProxy(
  target: URL,
): Promise<{ baseURL: string; close: () => Promise<void>; drops: () => number }> {
  let drops = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    sockets.add(client).add(upstream);
    client.pipe(upstream);
    upstream.once('data', () => {
      drops += 1;
      client.destroy();
      upstream.destroy();
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as net.AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${address.port}${target.pathname}`,
    drops: () => drops,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
