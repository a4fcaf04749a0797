import type { Command } from 'commander';
import type { CliContext } from '../context.js';

export function registerMigrate(program: Command, ctx: CliContext): void {
  program
    .command('migrate')
    .description('bring the database schema up to date (idempotent)')
    .option('--json', 'print one JSON object')
    .action(async (_opts, cmd: Command) => {
      await ctx.store({ create: true }); // opening the store migrates it
      ctx.emit(cmd, { migrated: true }, `Database ${ctx.config().databaseUrl} is up to date.`);
    });
}
