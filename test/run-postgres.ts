/**
 * The suite's PostgreSQL run (`npm test` runs it after the SQLite run):
 * every test file that is not about SQLite itself or needs no database,
 * each test context on a schema of its own (test/helpers.ts `setup`), in a
 * database made for this run and dropped after it. Without a PostgreSQL
 * server to reach, it says so and passes.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createTestDatabase, postgresUrl, POSTGRES_SKIPPED } from './postgres.js';

/** Files about SQLite itself, about no database, or that run both databases themselves. */
const NOT_IN_THIS_RUN = new Set([
  'checkpointer.test.ts',
  'disk-full.test.ts',
  'read-only.test.ts',
  'group-commit.test.ts',
  'index-merging.test.ts',
  'migrations.test.ts',
  'store.test.ts',
  'store-contract.test.ts',
  'instances.test.ts',
  'postgres-store.test.ts',
  'rate-limit-redis.test.ts',
  'backup.test.ts',
  'config.test.ts',
  'schemas.test.ts',
  'markdown.test.ts',
  'docs-page.test.ts',
  'deploy.test.ts',
]);

const server = await postgresUrl();
if (server === null) {
  process.stdout.write(`\n# SKIPPED: the PostgreSQL run of the suite. ${POSTGRES_SKIPPED}.\n`);
  process.exit(0);
}
// Files named on the command line narrow the run (`node --import tsx test/run-postgres.ts test/http.test.ts`).
const named = process.argv.slice(2);
const files =
  named.length > 0
    ? named
    : readdirSync(new URL('.', import.meta.url))
        .filter((f) => f.endsWith('.test.ts') && !NOT_IN_THIS_RUN.has(f))
        .sort()
        .map((f) => `test/${f}`);
const database = await createTestDatabase(server);
process.stdout.write(`\n# The suite on PostgreSQL (${files.length} files, database ${new URL(database.url).pathname.slice(1)})\n`);
const run = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=4', '--test-timeout=300000', ...files], {
  stdio: 'inherit',
  env: { ...process.env, FOLIO_TEST_POSTGRES_URL: database.url },
});
await database.drop();
process.exit(run.status ?? 1);
