import type { Command } from 'commander';
import { ConfigError, loadConfig } from '../../config.js';
import { UsageError } from '../../errors.js';
import { COPIED_TABLES, type TableCounts } from '../../store/copy.js';
import { postgresName } from '../../store/postgres/database.js';
import { copyIntoPostgres } from '../../store/postgres/import.js';
import { openSqliteExport } from '../../store/sqlite/export.js';
import type { CliContext } from '../context.js';

export function registerCopy(program: Command, ctx: CliContext): void {
  program
    .command('copy')
    .description(
      'copy everything from the configured SQLite database (DATABASE_URL) into an empty PostgreSQL database, ' +
        'in one transaction, and check the counts of every table against the source',
    )
    .requiredOption('--to <databaseUrl>', 'the PostgreSQL database to copy into, postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE; it must hold no Folio data')
    .option('--json', 'print one JSON object')
    .action(async (opts: { to: string }, cmd: Command) => {
      const target = postgresTarget(opts.to);
      const { database } = ctx.config();
      if (database.kind !== 'sqlite') {
        throw new UsageError(
          `folio copy copies an SQLite database, and DATABASE_URL names PostgreSQL at ${postgresName(database.url)}; set DATABASE_URL to the sqlite: file to copy from`,
        );
      }
      const source = openSqliteExport(database.file);
      let copied: TableCounts;
      try {
        copied = await copyIntoPostgres(target, source);
      } finally {
        source.close();
      }
      const width = Math.max(...COPIED_TABLES.map((t) => t.length));
      const text = [
        `Copied ${database.file} into PostgreSQL at ${postgresName(target)}; the counts of every table match the source's:`,
        ...COPIED_TABLES.map((t) => `  ${t.padEnd(width)}  ${copied[t]}`),
      ].join('\n');
      ctx.emit(cmd, { copied }, text);
    });
}

/** `--to`, checked as DATABASE_URL is (config.ts), and PostgreSQL's only. */
function postgresTarget(url: string): string {
  let database;
  try {
    ({ database } = loadConfig({ DATABASE_URL: url }));
  } catch (err) {
    if (err instanceof ConfigError && err.variable === 'DATABASE_URL') throw new UsageError(`--to: ${err.message.replace(/^DATABASE_URL: /, '')}`);
    throw err;
  }
  if (database.kind !== 'postgres') throw new UsageError('--to must name a PostgreSQL database (postgres://USER@HOST/DATABASE): folio copy copies SQLite into PostgreSQL');
  return database.url;
}
