import type { Command } from 'commander';
import type { CliContext } from '../context.js';

export function registerTemplate(program: Command, ctx: CliContext): void {
  const template = program.command('template').description('create document templates');

  template
    .command('create')
    .description('create a template: personal (--user), a team\'s (--org; with --user, that member is its creator), or built in (--system)')
    .requiredOption('--title <title>', 'template title')
    .option('--user <userId>', "a personal template of this user (with --org: the team template's creator, a member)")
    .option('--org <orgId>', 'a team template of this organization (without --user: no user is its creator)')
    .option('--description <text>', 'description')
    .option('--system', 'a built-in template, visible in every workspace', false)
    .option('--default', 'make it the default of its workspace (replacing the previous default)', false)
    .option('--json', 'print one JSON object')
    .action(
      async (
        opts: { title: string; user?: string; org?: string; description?: string; system: boolean; default: boolean },
        cmd: Command,
      ) => {
        const t = await (await ctx.admin()).createTemplate({
          title: opts.title,
          userId: opts.user,
          orgId: opts.org,
          description: opts.description,
          system: opts.system,
          isDefault: opts.default,
        });
        ctx.emit(cmd, { id: t.id }, `Created template ${t.id} (${opts.title}).`);
      },
    );
}
