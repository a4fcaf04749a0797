/**
 * How long a request waits for a lock another process or session holds,
 * in either store, before it fails: SQLite's busy timeout (another
 * process's write lock), PostgreSQL's lock_timeout and its wait for a
 * connection of the pool. A request is answered with an error rather than
 * held without end.
 */
export const LOCK_WAIT_MS = 5000;
