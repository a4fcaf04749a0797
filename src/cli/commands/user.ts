import type { Command } from 'commander';
import type { CliContext } from '../context.js';

export function registerUser(program: Command, ctx: CliContext): void {
  const user = program.command('user').description('create and list users, set their plans');

  user
    .command('create')
    .description('create a user')
    .requiredOption('--email <email>', 'e-mail address (unique)')
    .option('--name <name>', 'display name')
    .option('--plan <lookup>', 'plan lookup key, e.g. pro_monthly')
    .option('--json', 'print one JSON object')
    .action(async (opts: { email: string; name?: string; plan?: string }, cmd: Command) => {
      const u = await (await ctx.admin()).createUser(opts);
      ctx.emit(cmd, { id: u.id }, `Created user ${u.id} <${u.email}>${u.plan ? ` on plan ${u.plan}` : ''}.`);
    });

  user
    .command('set-plan')
    .description("set a user's own plan (a lookup key, or none)")
    .argument('<userId>', 'user id (user_…)')
    .argument('<plan>', 'plan lookup key, or none')
    .option('--json', 'print one JSON object')
    .action(async (userId: string, plan: string, _opts, cmd: Command) => {
      const r = await (await ctx.admin()).setUserPlan(userId, plan);
      ctx.emit(cmd, r, `User ${r.id} is now on ${r.plan ?? 'no plan'}.`);
    });

  user
    .command('list')
    .description('list every user, oldest first')
    .option('--json', 'print one JSON object')
    .action(async (_opts, cmd: Command) => {
      const users = await (await ctx.admin()).listUsers();
      const lines = users.map((u) => `${u.id}  ${u.email}  ${u.name ?? '-'}  ${u.plan ?? 'no plan'}  ${u.createdAt}`);
      ctx.emit(cmd, { users }, users.length === 0 ? 'No users.' : lines.join('\n'));
    });
}
