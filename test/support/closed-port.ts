import { createServer } from 'node:net';

/**
 * A port on 127.0.0.1 where nothing listens: bound by a server, which is then closed. Take it after
 * starting the servers a test needs: the port just closed may be the next one handed out.
 */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the server has no port');
  await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
  return address.port;
}
