import { createServer, type AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { ConfigError, withPort, type Config } from './config.js';
import { redisLimiter, type RedisLimiter, type RedisReport } from './rate-limit/redis.js';
import { openStore } from './store/open.js';

/** How often a server shutting down closes the connections that have fallen idle since. */
const IDLE_SWEEP_MS = 50;

/** How long a request's statement may wait for PostgreSQL's answer: far longer than any takes, with a lock wait (5 s) included. */
const STATEMENT_ANSWER_MS = 30_000;

/**
 * Runs the server until SIGTERM or SIGINT: then it stops accepting
 * connections, lets in-flight requests finish, and closes the database.
 */
export async function serve(configured: Config): Promise<FastifyInstance> {
  // A port taken or a host not this machine's is said before the database is
  // opened: an upgrade of its schema can take tens of seconds (README.md).
  // With PORT 0 the port the system chose is the one listened on, and named
  // by the `url` fields (withPort); taken meanwhile by another process, it
  // is reported in use, as a configured port would be.
  const port = await tryListening(configured);
  const config = configured.port === 0 ? withPort(configured, port) : configured;
  // Rate limits shared through Redis: it must answer now, before the database
  // is opened. What it and the database's background thread say later goes
  // to the server's log once there is one.
  let report: RedisReport = (_level, message) => process.stderr.write(`Folio: ${message}\n`);
  const limiter: RedisLimiter | undefined =
    config.redisUrl === null
      ? undefined
      : await redisLimiter({ readPerMin: config.readLimitPerMin, writePerMin: config.writeLimitPerMin }, config.redisUrl, {
          report: (level, message) => report(level, message),
        });
  // The logger comes with the app, after the store; an upgrade that rebuilds
  // the search index can take tens of seconds, so say so at once.
  const rebuildTakes = `about ${config.database.kind === 'postgres' ? 50 : 30} s per 100,000 documents`;
  const store = await openStore(config, {
    // The request thread never copies the log into the database file itself,
    // and the search index is merged further while no writes come (checkpointer.ts).
    background: { report: (level, message) => report(level, message) },
    // A request's statement that PostgreSQL leaves unanswered (a stalled
    // network or server) fails, and the request is answered 500, rather than
    // waiting, with every request after it, for as long as the stall lasts.
    answerWithinMs: STATEMENT_ANSWER_MS,
    onMigrate: (from, to) =>
      process.stderr.write(
        from === 0
          ? `Folio: creating the database schema (version ${to}).\n`
          : `Folio: upgrading the database schema from version ${from} to ${to}; an upgrade that rebuilds the search index takes ${rebuildTakes}…\n`,
      ),
    onReindex: (from, to) =>
      process.stderr.write(
        from === to
          ? `Folio: rebuilding the search index, which an earlier version of Folio built otherwise; ${rebuildTakes}…\n`
          : `Folio: rebuilding the search index for Unicode ${to} (${from === null ? 'it does not say which Unicode version it was built with' : `it was built with Unicode ${from}`}); ${rebuildTakes}…\n`,
      ),
  }).catch(async (err: unknown) => {
    await limiter?.close();
    throw err;
  });
  // Closes what the server opened; an open connection to Redis would keep the process running.
  const closeAll = async () => {
    const closed = await Promise.allSettled([store.close(), limiter?.close()]);
    for (const c of closed) if (c.status === 'rejected') throw c.reason;
  };
  const app = await buildApp({ config, store, ...(limiter ? { limiter } : {}) }).catch(async (err: unknown) => {
    await closeAll();
    throw err;
  });
  report = (level, message) => app.log[level](message);
  app.addHook('onClose', closeAll);

  let closing = false;
  const shutdown = (signal: string) => {
    // A second signal (an operator's or a supervisor's repeat) must not cut
    // short the requests the first one lets finish.
    if (closing) {
      app.log.info({ signal }, 'already shutting down');
      return;
    }
    closing = true;
    app.log.info({ signal }, 'shutting down');
    // Node's close() ends the connections idle at that moment only: one whose
    // response was still going out would stay open after it (keep-alive) for
    // as long as its client kept it, and the server with it. Each is closed
    // once it falls idle.
    const sweep = setInterval(() => app.server.closeIdleConnections(), IDLE_SWEEP_MS);
    sweep.unref();
    app
      .close()
      .catch((err: unknown) => {
        app.log.error({ err }, 'shutdown failed');
        process.exitCode = 1;
      })
      .finally(() => clearInterval(sweep));
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));

  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    await app.close();
    throw listenError(err, config);
  }
  return app;
}

/** Listens on the configured address and closes again at once, returning the port it had; throws as serve() would if it cannot. */
async function tryListening({ host, port }: Pick<Config, 'host' | 'port'>): Promise<number> {
  const probe = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen({ host, port }, () => resolve());
    });
    return (probe.address() as AddressInfo).port;
  } catch (err) {
    throw listenError(err, { host, port });
  } finally {
    await new Promise<void>((resolve) => (probe.listening ? probe.close(() => resolve()) : resolve()));
  }
}

/** Why the server could not listen, naming the variable to change where one is at fault. */
function listenError(err: unknown, { host, port }: Pick<Config, 'host' | 'port'>): unknown {
  switch ((err as { code?: unknown }).code) {
    case 'EADDRINUSE':
      return new ConfigError('PORT', `${port} is already in use on ${host}`);
    case 'EACCES':
      return new ConfigError('PORT', `${port} on ${host} may not be listened on by this user`);
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_FAIL':
      return new ConfigError('HOST', `"${host}" is not an address of this machine (${(err as Error).message})`);
    default:
      return err;
  }
}
