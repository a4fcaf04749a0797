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
 * One branch of a viewer's scope in a list (listBranches): its condition,
 * and whether an index gives its rows newest first as they are read (an
 * equality on the leading column of an index ordered by sort time), so that
 * the page can stop reading it as soon as the page is full.
 */
export interface ListBranch {
  where: string;
  ordered: boolean;
}

/**
 * A page of a list (documents, chats), newest first, ties by id. The
 * branches of the viewer's scope (listBranches) are merged: SQLite reads
 * each ordered branch along its index and merges them, reading no more of
 * each than the page takes (a condition the index does not hold, such as a
 * chat's title, reads on until the branch has the page's rows or none are
 * left), from the row key, `sort_at` and `id`, which the indexes cover. A
 * branch that is not ordered picks its own first page first (sorting all it
 * matches). Only the page's rows are then read from the table, with `join`
 * for what else they show. A branch that picks its own page, even from an
 * index, is sorted again by the merge: two projects' pages took 16 µs so,
 * 11.5 as one branch of both (which reads and sorts all their rows), and 5
 * merged along the index (bench/README.md).
 *
 * `and` is a condition every branch adds (`AND …`: one project, a title),
 * which keeps an ordered branch ordered. `ordered: false` leaves the final
 * order to the caller (an aggregate that orders its input itself), sparing
 * a sort.
 */
export function listPageSql(o: {
  table: string;
  t: string;
  key: string;
  branches: ListBranch[];
  and?: string;
  select: string;
  join?: string;
  ordered?: boolean;
}): string {
  const { table, t, key } = o;
  const parts = o.branches.map((b) => {
    const pick = `SELECT ${t}.${key} AS k, ${t}.sort_at, ${t}.id FROM ${table} ${t} WHERE ${b.where}${o.and ?? ''}`;
    return b.ordered ? pick : `SELECT * FROM (${pick} ORDER BY ${t}.sort_at DESC, ${t}.id DESC ${PAGE_LIMIT})`;
  });
  return `SELECT ${o.select}
     FROM (${parts.join(' UNION ALL ')}
           ORDER BY sort_at DESC, id DESC ${PAGE_LIMIT}) AS page
     JOIN ${table} ${t} ON ${t}.${key} = page.k${o.join ? `
     ${o.join}` : ''}${o.ordered === false ? '' : `
     ORDER BY page.sort_at DESC, page.id DESC`}`;
}
