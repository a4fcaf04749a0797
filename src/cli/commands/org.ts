import type { Command } from 'commander';
import type { CliContext } from '../context.js';

export function registerOrg(program: Command, ctx: CliContext): void {
  const org = program.command('org').description('create and list organizations (teams), set their plans and members');

  org
    .command('create')
    .description('create an organization')
    .requiredOption('--name <name>', 'organization name')
    .option('--plan <lookup>', 'plan lookup key, e.g. team_monthly')
    .option('--json', 'print one JSON object')
    .action(async (opts: { name: string; plan?: string }, cmd: Command) => {
      const o = await (await ctx.admin()).createOrg(opts);
      ctx.emit(cmd, { id: o.id }, `Created organization ${o.id} (${o.name})${o.plan ? ` on plan ${o.plan}` : ''}.`);
    });

  org
    .command('set-plan')
    .description("set an organization's plan (a lookup key, or none)")
    .argument('<orgId>', 'organization id (org_…)')
    .argument('<plan>', 'plan lookup key, or none')
    .option('--json', 'print one JSON object')
    .action(async (orgId: string, plan: string, _opts, cmd: Command) => {
      const r = await (await ctx.admin()).setOrgPlan(orgId, plan);
      ctx.emit(cmd, r, `Organization ${r.id} is now on ${r.plan ?? 'no plan'}.`);
    });

  org
    .command('add-member')
    .description('add a user to an organization')
    .argument('<orgId>', 'organization id (org_…)')
    .argument('<userId>', 'user id (user_…)')
    .option('--json', 'print one JSON object')
    .action(async (orgId: string, userId: string, _opts, cmd: Command) => {
      await (await ctx.admin()).addMember(orgId, userId);
      ctx.emit(cmd, { ok: true }, `Added ${userId} to ${orgId}.`);
    });

  org
    .command('remove-member')
    .description('remove a user from an organization (their access ends at once)')
    .argument('<orgId>', 'organization id (org_…)')
    .argument('<userId>', 'user id (user_…)')
    .option('--json', 'print one JSON object')
    .action(async (orgId: string, userId: string, _opts, cmd: Command) => {
      await (await ctx.admin()).removeMember(orgId, userId);
      ctx.emit(cmd, { ok: true }, `Removed ${userId} from ${orgId}.`);
    });

  org
    .command('list')
    .description('list every organization, oldest first')
    .option('--json', 'print one JSON object')
    .action(async (_opts, cmd: Command) => {
      const organizations = await (await ctx.admin()).listOrgs();
      const lines = organizations.map((o) => `${o.id}  ${o.name}  ${o.plan ?? 'no plan'}  ${o.createdAt}`);
      ctx.emit(cmd, { organizations }, organizations.length === 0 ? 'No organizations.' : lines.join('\n'));
    });

  org
    .command('members')
    .description("list an organization's members, in the order they joined")
    .argument('<orgId>', 'organization id (org_…)')
    .option('--json', 'print one JSON object')
    .action(async (orgId: string, _opts, cmd: Command) => {
      const members = await (await ctx.admin()).listMembers(orgId);
      const lines = members.map((m) => `${m.id}  ${m.email}  ${m.name ?? '-'}  joined ${m.joinedAt}`);
      ctx.emit(cmd, { members }, members.length === 0 ? `No members in ${orgId}.` : lines.join('\n'));
    });
}
