import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { UsageError } from '../../errors.js';
import type { CliContext } from '../context.js';

export function registerDoc(program: Command, ctx: CliContext): void {
  const doc = program.command('doc').description('create documents');

  doc
    .command('create')
    .description('create a Markdown document')
    .requiredOption('--user <userId>', 'the creator')
    .requiredOption('--title <title>', 'title (1 to 200 characters)')
    .option('--content <markdown>', 'the Markdown content')
    .option('--file <path>', 'read the Markdown content from this file (UTF-8)')
    .option('--org <orgId>', 'create it in this organization')
    .option('--project <projectId>', 'put it in this project')
    .option('--thread <chatId>', 'the chat thread it was created in: one in its project, or outside projects with it')
    .option('--json', 'print one JSON object')
    .action(
      async (
        opts: { user: string; title: string; content?: string; file?: string; org?: string; project?: string; thread?: string },
        cmd: Command,
      ) => {
        if ((opts.content === undefined) === (opts.file === undefined)) {
          throw new UsageError('give the content with exactly one of --content MD or --file PATH');
        }
        const content = opts.content ?? (await readContent(opts.file!));
        const d = await (await ctx.admin()).createDocument({
          userId: opts.user,
          title: opts.title,
          content,
          orgId: opts.org,
          projectId: opts.project,
          threadId: opts.thread,
        });
        ctx.emit(cmd, d, `Created document ${d.id}: ${d.url}`);
      },
    );
}

/**
 * The file's text, which must be UTF-8, as the API takes only UTF-8: bytes
 * that are not are refused, not stored as U+FFFD. A byte-order mark at its
 * start is not part of the text.
 */
async function readContent(path: string): Promise<string> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (err) {
    throw new UsageError(`cannot read --file ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new UsageError(`--file ${path} is not UTF-8 text; save it as UTF-8 and try again`);
  }
}
