import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const STORE = join(import.meta.dirname, '..', 'src', 'store');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

describe('store SQL', () => {
  it('binds no bare LIMIT parameter, which would make SQLite compile the statement again on every run', () => {
    const files = sourceFiles(STORE);
    assert.ok(files.length > 5, 'the store sources are found');
    const offenders = files.flatMap((f) =>
      readFileSync(f, 'utf8')
        .split('\n')
        .map((line, i) => ({ line, at: `${f}:${i + 1}` }))
        .filter(({ line }) => !/^\s*(\*|\/\/)/.test(line) && /\bLIMIT\s+[@:$?]/i.test(line))
        .map(({ at, line }) => `${at}: ${line.trim()}`),
    );
    assert.deepEqual(offenders, [], 'use PAGE_LIMIT (src/store/sqlite/page-limit.ts)');
  });
});
