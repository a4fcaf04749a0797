/**
 * `LIMIT @limit` for a page of a list, written so that SQLite does not read
 * the bound value when it plans the statement. The SQLite that
 * better-sqlite3 bundles (3.53) takes a bare bound LIMIT as an input of the
 * plan (sqlite3ExprIsInteger) and marks the statement to be compiled again
 * whenever that parameter is bound, that is, before every run: 25-38 µs of
 * a 60-100 µs page of documents (bench/README.md). It does not look into an
 * expression, and the plans are the same.
 */
export const PAGE_LIMIT = 'LIMIT (@limit + 0)';

/**
 * A page of a list (documents, chats): each branch of the viewer's scope
 * (listBranches) picks its part of the page from an index, reading only the
 * row key, `sort_at` and `id`, which the index covers; the page is merged
 * from those, newest first, ties by id; and only its rows are then read from
 * the table, with `join` for what else they show.
 */
export function listPageSql(o: { table: string; t: string; key: string; branches: string[]; select: string; join?: string }): string {
  const { table, t, key } = o;
  const parts = o.branches.map(
    (cond) => `SELECT * FROM (SELECT ${t}.${key} AS k, ${t}.sort_at, ${t}.id FROM ${table} ${t} WHERE ${cond}
       ORDER BY ${t}.sort_at DESC, ${t}.id DESC ${PAGE_LIMIT})`,
  );
  return `SELECT ${o.select}
     FROM (SELECT k, sort_at, id FROM (${parts.join(' UNION ALL ')})
           ORDER BY sort_at DESC, id DESC ${PAGE_LIMIT}) AS page
     JOIN ${table} ${t} ON ${t}.${key} = page.k${o.join ? `
     ${o.join}` : ''}
     ORDER BY page.sort_at DESC, page.id DESC`;
}
