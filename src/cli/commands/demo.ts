import type { Command } from 'commander';
import { ensureDemoWorkspace } from '../../demo/workspace.js';
import { systemClock } from '../../domain/time.js';
import { adminService } from '../../services/admin.js';
import type { CliContext } from '../context.js';

export function registerDemo(program: Command, ctx: CliContext): void {
  program
    .command('demo')
    .description('create a demo workspace (once) and print fresh read and write keys for it')
    .option('--json', 'print one JSON object')
    .action(async (_opts, cmd: Command) => {
      const demo = await ensureDemoWorkspace(await ctx.store({ create: true }), (tx) => adminService({ store: tx, config: ctx.config(), clock: systemClock }));
      // Where `npm start` serves the API; PUBLIC_APP_URL is only the `url` fields' base.
      const server = ctx.config().serverUrl;
      const baseUrl = `${server}/v1`;
      const text = [
        demo.created ? 'Created the demo workspace for demo@folio.local.' : 'The demo workspace already exists; here are fresh keys for it.',
        '',
        `  base URL   ${baseUrl}`,
        `  API docs   ${baseUrl}/docs`,
        `  MCP        ${server}/mcp  (Authorization: Bearer <key>; see README, "Connect an agent")`,
        `  read key   ${demo.key}`,
        `  write key  ${demo.writeKey}`,
        ...(demo.teamId === null ? [] : [`  team       ${demo.teamId}  (add organizationId=${demo.teamId} for the team's workspace)`]),
        '',
        'Try it once the server runs (npm start; npm run demo starts it next):',
        '',
        `  curl -s -H "Authorization: Bearer ${demo.key}" ${baseUrl}/documents`,
      ].join('\n');
      ctx.emit(cmd, { userId: demo.userId, key: demo.key, writeKey: demo.writeKey, baseUrl }, text);
    });
}
