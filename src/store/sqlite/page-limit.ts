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
