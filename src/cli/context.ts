import type { Command } from 'commander';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { systemClock } from '../domain/time.js';
import { adminService, type AdminService } from '../services/admin.js';
import { openStore } from '../store/open.js';
import type { Store } from '../store/store.js';

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  env: Record<string, string | undefined>;
}

/** What every command gets: configuration, the operator service, and one way to print. */
export interface CliContext {
  io: CliIo;
  config(): Config;
  /**
   * Opens the store on first use; the runner closes it. Only the commands
   * that set a database up (`migrate`, `demo`) may create a missing SQLite
   * file or Folio's schema in an empty PostgreSQL database; the others
   * stop, naming it (DESIGN §5). None takes `sqlite::memory:`, which only
   * `serve` (with a store of its own) can use.
   */
  store(options?: { create?: boolean }): Promise<Store>;
  admin(): Promise<AdminService>;
  /** With --json: exactly one JSON object on stdout; otherwise the readable text. */
  emit(command: Command, json: object, text: string): void;
  close(): Promise<void>;
}

export function cliContext(io: CliIo): CliContext {
  let config: Config | undefined;
  let store: Store | undefined;
  let admin: AdminService | undefined;
  const ctx: CliContext = {
    io,
    config: () => (config ??= loadConfig(io.env)),
    async store(options = {}) {
      if (store !== undefined) return store;
      const config = ctx.config();
      // An in-memory database is this one process's and ends with it: what a
      // command wrote there (a user, a key) would be reported made, and be
      // gone before any server could see it.
      if (config.database.kind === 'sqlite' && config.database.file === ':memory:') {
        throw new ConfigError(
          'DATABASE_URL',
          "sqlite::memory: is a database in one process's memory, which no other process can read: what folio wrote there would be gone when it ends; point DATABASE_URL at the server's database (sqlite:PATH or postgres://…)",
        );
      }
      return (store = await openStore(config, { create: options.create ?? false }));
    },
    async admin() {
      return (admin ??= adminService({ store: await ctx.store(), config: ctx.config(), clock: systemClock }));
    },
    emit(command, json, text) {
      io.out(command.optsWithGlobals<{ json?: boolean }>().json ? JSON.stringify(json) : text);
    },
    async close() {
      await store?.close();
    },
  };
  return ctx;
}
