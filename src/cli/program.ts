import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config.js';
import { UsageError } from '../errors.js';
import { isStoreBusy } from '../store/open.js';
import { LOCK_WAIT_MS } from '../store/lock-wait.js';
import { FULL_DISK, isDiskFull, isSqliteError } from '../store/sqlite/database.js';
import { cliContext, type CliIo } from './context.js';
import { FOLIO_VERSION } from '../version.js';
import { registerServe } from './commands/serve.js';
import { registerMigrate } from './commands/migrate.js';
import { registerDemo } from './commands/demo.js';
import { registerUser } from './commands/user.js';
import { registerOrg } from './commands/org.js';
import { registerKey } from './commands/key.js';
import { registerProject } from './commands/project.js';
import { registerTemplate } from './commands/template.js';
import { registerChat } from './commands/chat.js';
import { registerDoc } from './commands/doc.js';
import { registerRevisions } from './commands/revisions.js';
import { registerCopy } from './commands/copy.js';
import { registerBackup } from './commands/backup.js';

/**
 * Runs one `folio` command line and returns its exit status. Commands throw;
 * only the entry point turns the status into the process's exit code.
 */
export async function run(argv: string[], io: CliIo): Promise<number> {
  const ctx = cliContext(io);
  const program = new Command('folio')
    .description('Folio operator commands: run the server; set up users, teams, plans, keys and content; prune document history; back up the database.')
    // Also before the command's name (`folio --json user create …`); each command takes it after its name too.
    .option('--json', 'print one JSON object')
    .option('--version', "print Folio's version")
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.replace(/\n$/, '')), writeErr: (s) => io.err(s.replace(/\n$/, '')) });

  for (const register of [
    registerServe,
    registerMigrate,
    registerDemo,
    registerUser,
    registerOrg,
    registerKey,
    registerProject,
    registerTemplate,
    registerChat,
    registerDoc,
    registerRevisions,
    registerCopy,
    registerBackup,
  ]) {
    register(program, ctx);
  }

  // --help says which options a command cannot do without.
  const markRequired = (command: Command): void => {
    for (const option of command.options) if (option.mandatory) option.description = `${option.description} (required)`;
    command.commands.forEach(markRequired);
  };
  markRequired(program);

  // `folio --version`, with or without --json: answered before the commands are parsed.
  if (argv.includes('--version') && argv.every((a) => a === '--version' || a === '--json')) {
    io.out(argv.includes('--json') ? JSON.stringify({ version: FOLIO_VERSION }) : FOLIO_VERSION);
    return 0;
  }

  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode;
    if (err instanceof UsageError || err instanceof ConfigError) {
      io.err(`folio: ${err.message}`);
      return 1;
    }
    if (isStoreBusy(err)) {
      const held =
        ctx.config().database.kind === 'postgres'
          ? 'another session held a lock this command needs'
          : 'another process held its write lock';
      io.err(`folio: the database is busy: ${held} for more than ${LOCK_WAIT_MS / 1000} s (a long write, or one left open); try again`);
      return 1;
    }
    // An SQLite error comes from a store that is open: the configuration was read.
    if (isSqliteError(err)) {
      const { database } = ctx.config();
      if (database.kind === 'sqlite' && isDiskFull(err, database.file)) {
        io.err(`folio: the database file "${database.file}" could not be written (${err.message}): ${FULL_DISK}`);
        return 1;
      }
    }
    io.err(`folio: unexpected error: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  } finally {
    await ctx.close();
  }
}
