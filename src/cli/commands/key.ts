import type { Command } from 'commander';
import type { CliContext } from '../context.js';

export function registerKey(program: Command, ctx: CliContext): void {
  const key = program.command('key').description('create, list and revoke API keys');

  key
    .command('create')
    .description('create an API key; its secret is printed once and never again')
    .requiredOption('--user <userId>', 'the user the key acts as')
    .option('--name <name>', 'a name for the key, ideally the tool that uses it')
    .option('--write', 'also grant connector:write (create and update documents)', false)
    .option('--json', 'print one JSON object')
    .action(async (opts: { user: string; name?: string; write: boolean }, cmd: Command) => {
      const { hasApiAccess, ...k } = await (await ctx.admin()).createKey({ userId: opts.user, name: opts.name, write: opts.write });
      if (!hasApiAccess) {
        ctx.io.err(
          `folio: warning: no plan of user ${opts.user} or of their teams grants API access (API_PLANS), so this key will be answered 402 plan_required until one does: folio user set-plan ${opts.user} PLAN`,
        );
      }
      ctx.emit(
        cmd,
        k,
        `Created key ${k.id} (${k.scopes.join(', ')}):\n\n  ${k.key}\n\nStore it now: Folio keeps only its hash and cannot show it again.`,
      );
    });

  key
    .command('list')
    .description("list a user's keys (never their secrets)")
    .requiredOption('--user <userId>', 'user id (user_…)')
    .option('--json', 'print one JSON object')
    .action(async (opts: { user: string }, cmd: Command) => {
      const keys = await (await ctx.admin()).listKeys(opts.user);
      const json = {
        keys: keys.map((k) => ({
          id: k.id,
          name: k.name,
          scopes: k.scopes,
          createdAt: k.createdAt,
          lastUsedAt: k.lastUsedAt,
          revokedAt: k.revokedAt,
        })),
      };
      const lines = keys.map(
        (k) =>
          `${k.id}  fol_…${k.last4}  ${k.name ?? '(no name)'}  ${k.scopes.join(',')}  created ${k.createdAt}` +
          `  last used ${k.lastUsedAt ?? 'never'}${k.revokedAt ? `  REVOKED ${k.revokedAt}` : ''}`,
      );
      ctx.emit(cmd, json, lines.length > 0 ? lines.join('\n') : `User ${opts.user} has no keys.`);
    });

  key
    .command('revoke')
    .description('revoke a key; a running server refuses it from its next request')
    .argument('<keyId>', 'key id (key_…)')
    .option('--json', 'print one JSON object')
    .action(async (keyId: string, _opts, cmd: Command) => {
      const r = await (await ctx.admin()).revokeKey(keyId);
      ctx.emit(cmd, r, `Revoked key ${r.id} at ${r.revokedAt}.`);
    });
}
