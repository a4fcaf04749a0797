import type { Command } from 'commander';
import { postgresName } from '../../store/postgres/database.js';
import type { CliContext } from '../context.js';

export function registerMigrate(program: Command, ctx: CliContext): void {
  program
    .command('migrate')
    .description('bring the database schema up to date (idempotent)')
    .option('--json', 'print one JSON object')
    .action(async (_opts, cmd: Command) => {
      await ctx.store({ create: true }); // opening the store migrates it
      // Named as every other message names it: never with the URL's password.
      const { database } = ctx.config();
      const name = database.kind === 'postgres' ? `PostgreSQL at ${postgresName(database.url)}` : database.file;
      ctx.emit(cmd, { migrated: true }, `Database ${name} is up to date.`);
    });
}
