import type { Command } from 'commander';
import { UsageError } from '../../errors.js';
import type { CliContext } from '../context.js';

export function registerRevisions(program: Command, ctx: CliContext): void {
  const revisions = program.command('revisions').description("prune documents' history");

  revisions
    .command('prune')
    .description('delete all but the newest N revisions of every document')
    .requiredOption('--keep <count>', 'revisions to keep per document (at least 1)')
    .option('--json', 'print one JSON object')
    .action(async (opts: { keep: string }, cmd: Command) => {
      const keep = parseKeep(opts.keep);
      const removed = await (await ctx.store()).pruneRevisions(keep);
      const newest = keep === 1 ? 'its newest revision' : `its newest ${keep} revisions`;
      ctx.emit(cmd, { removed }, `Removed ${removed} ${removed === 1 ? 'revision' : 'revisions'}; every document keeps ${newest}.`);
    });
}

/** `--keep`: digits only (no sign, decimals or exponent), at least 1. */
function parseKeep(value: string): number {
  const keep = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(keep) || keep < 1) {
    throw new UsageError(`--keep must be a whole number of at least 1, got "${value}"`);
  }
  return keep;
}
