import type { Command } from 'commander';
import type { CliContext } from '../context.js';

export function registerProject(program: Command, ctx: CliContext): void {
  const project = program.command('project').description('create and share projects');

  project
    .command('create')
    .description("create a project in a user's personal workspace, or in a team's with --org")
    .requiredOption('--user <userId>', 'the creator')
    .requiredOption('--name <name>', 'project name')
    .option('--org <orgId>', 'create it in this organization (the user must be a member)')
    .option('--description <text>', 'description')
    .option('--json', 'print one JSON object')
    .action(async (opts: { user: string; name: string; org?: string; description?: string }, cmd: Command) => {
      const p = await (await ctx.admin()).createProject({
        userId: opts.user,
        name: opts.name,
        orgId: opts.org,
        description: opts.description,
      });
      ctx.emit(cmd, { id: p.id }, `Created project ${p.id} (${opts.name}).`);
    });

  project
    .command('share')
    .description('share a project, with its documents and chats, with a user')
    .argument('<projectId>', 'project id')
    .argument('<userId>', 'user id (user_…)')
    .option('--json', 'print one JSON object')
    .action(async (projectId: string, userId: string, _opts, cmd: Command) => {
      await (await ctx.admin()).shareProject(projectId, userId);
      ctx.emit(cmd, { ok: true }, `Shared ${projectId} with ${userId}.`);
    });
}
