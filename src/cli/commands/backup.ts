import type { Command } from 'commander';
import { UsageError } from '../../errors.js';
import { postgresName } from '../../store/postgres/database.js';
import { backupDatabase } from '../../store/sqlite/backup.js';
import type { CliContext } from '../context.js';

export function registerBackup(program: Command, ctx: CliContext): void {
  program
    .command('backup')
    .description(
      'copy the SQLite database (DATABASE_URL) to FILE while servers write to it: one consistent state, ' +
        'written under a temporary name and given its name once whole; for PostgreSQL, use pg_dump',
    )
    .argument('<file>', 'where to write the copy; it must not exist yet')
    .option('--json', 'print one JSON object')
    .action(async (file: string, _opts, cmd: Command) => {
      if (file === '') throw new UsageError('FILE must name the file to write the copy to');
      const { database } = ctx.config();
      if (database.kind === 'postgres') {
        throw new UsageError(
          `folio backup copies an SQLite database, and DATABASE_URL names PostgreSQL at ${postgresName(database.url)}; ` +
            `back it up with PostgreSQL's own tool: pg_dump --format=custom --file=${shellWord(file)} "$DATABASE_URL" (docs/operations.md, "Backups and restore")`,
        );
      }
      const backup = await backupDatabase(database.file, file);
      ctx.emit(cmd, backup, `Backed up ${database.file} to ${backup.file} (${backup.bytes} bytes).`);
    });
}

/** `word` as the shell reads it back: as it is when it holds nothing the shell would take apart, else single-quoted. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
