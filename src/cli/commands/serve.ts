import type { Command } from 'commander';
import { serve } from '../../main.js';
import type { CliContext } from '../context.js';

export function registerServe(program: Command, ctx: CliContext): void {
  program
    .command('serve')
    .description('start the API server (configured by the environment; stops cleanly on SIGTERM)')
    .option('--json', 'accepted for symmetry; the server logs JSON lines')
    .action(async () => {
      await serve(ctx.config());
    });
}
