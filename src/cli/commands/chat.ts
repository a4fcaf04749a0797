import type { Command } from 'commander';
import type { CliContext } from '../context.js';

export function registerChat(program: Command, ctx: CliContext): void {
  const chat = program.command('chat').description('create chat threads');

  chat
    .command('create')
    .description('create a chat thread')
    .requiredOption('--user <userId>', 'the creator')
    .option('--title <title>', 'chat title')
    .option('--org <orgId>', 'create it in this organization')
    .option('--project <projectId>', 'put it in this project')
    .option('--messages <count>', 'number of messages in the thread', '0')
    .option('--json', 'print one JSON object')
    .action(
      async (opts: { user: string; title?: string; org?: string; project?: string; messages: string }, cmd: Command) => {
        const c = await (await ctx.admin()).createChat({
          userId: opts.user,
          title: opts.title,
          orgId: opts.org,
          projectId: opts.project,
          messages: opts.messages,
        });
        ctx.emit(cmd, { id: c.id }, `Created chat ${c.id}.`);
      },
    );
}
