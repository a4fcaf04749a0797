import type { Command } from 'commander';
import { loadConfig, type Config } from '../config.js';
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
   * stop, naming it (DESIGN §5).
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
      return (store = await openStore(ctx.config(), { create: options.create ?? false }));
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
