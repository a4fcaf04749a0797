import { closeSync, openSync, readSync, realpathSync } from 'node:fs';
import type { Db } from './database.js';

/** The first copy of the WAL-index header, at the start of the `-shm` file. */
export const WAL_INDEX_HEADER_BYTES = 48;
/** Its `iVersion`, in every SQLite since WAL mode came (3.7.0). */
const WAL_INDEX_VERSION = 3007000;
/** Byte offset of `isInit`, 1 once the header is set up. */
const IS_INIT = 12;

/**
 * SQLite's WAL-index header (https://sqlite.org/walformat.html, "The
 * WAL-Index Header"), read from the database's `-shm` file, which every
 * connection in WAL mode maps into memory and shares. Every commit, by any
 * connection of any process, rewrites it before the commit returns: its
 * change counter, the last frame of the log and their checksums. Reading
 * it is one system call on pages already in memory, where `PRAGMA
 * data_version` takes and drops a read lock (two `fcntl` calls and SQLite's
 * transaction around them): the access cache (access-cache.ts) reads it
 * first and asks `data_version` only when its bytes have changed.
 *
 * Null where there is nothing to read: a database in memory, a `-shm` file
 * that cannot be opened, a system other than Linux or macOS (where a read
 * of the file is known to see what other processes write through their
 * shared mappings of it); a header not in the format above (another SQLite)
 * reads as unreadable. The cache then asks `data_version` every time, as
 * before.
 *
 * Close it only after the database: closing any descriptor of the `-shm`
 * file drops every POSIX lock this process holds on it, SQLite's included,
 * and another process opening the database would then take the file for
 * unused and set it up afresh under the open connection.
 */
export interface WalIndexHeader {
  /** Reads the header into `into` (WAL_INDEX_HEADER_BYTES long); false if it could not be read whole. */
  read(into: Buffer): boolean;
  close(): void;
}

export function walIndexHeader(db: Db): WalIndexHeader | null {
  if (db.memory || (process.platform !== 'linux' && process.platform !== 'darwin')) return null;
  let fd: number;
  try {
    // Named after the database's real path, as SQLite names it, symbolic links followed.
    fd = openSync(`${realpathSync(db.name)}-shm`, 'r');
  } catch {
    return null;
  }
  const read = (into: Buffer) => {
    try {
      return readSync(fd, into, 0, WAL_INDEX_HEADER_BYTES, 0) === WAL_INDEX_HEADER_BYTES;
    } catch {
      return false;
    }
  };
  const first = Buffer.alloc(WAL_INDEX_HEADER_BYTES);
  // The header is in the machine's own byte order.
  const version = (b: Buffer) => (b.readUInt32LE(0) === WAL_INDEX_VERSION ? WAL_INDEX_VERSION : b.readUInt32BE(0));
  // Not closed now if unrecognised (see above): kept, and never read.
  const known = read(first) && version(first) === WAL_INDEX_VERSION && first[IS_INIT] === 1;
  let open = true;
  return {
    read: (into) => known && open && read(into),
    close() {
      if (open) closeSync(fd);
      open = false;
    },
  };
}
