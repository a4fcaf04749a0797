import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { openStore } from './store/open.js';

/**
 * Runs the server until SIGTERM or SIGINT: then it stops accepting
 * connections, lets in-flight requests finish, and closes the database.
 */
export async function serve(config: Config): Promise<FastifyInstance> {
  const store = await openStore(config);
  const app = await buildApp({ config, store });
  app.addHook('onClose', async () => {
    await store.close();
  });

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    app.close().catch((err: unknown) => {
      app.log.error({ err }, 'shutdown failed');
      process.exitCode = 1;
    });
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));

  await app.listen({ port: config.port, host: config.host });
  return app;
}
