import { closeSync, openSync, readSync, realpathSync } from 'node:fs';
import type { Db } from './database.js';
import { mapFile } from './shared-map.js';

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
 * change counter, the last frame of the log and their checksums. Folio maps
 * the file too (shared-map.ts), so that reading the header is a copy of 48
 * bytes of memory, where `PRAGMA data_version` takes and drops a read lock
 * (two `fcntl` calls and SQLite's transaction around them): the access
 * cache (access-cache.ts) reads it before each lookup and asks
 * `data_version` only when its bytes have changed. Without the native
 * addon, the header is read from the file, one system call (about 1 µs on
 * a fast hour of the benchmark's machine, 3 µs on a slow one, and up to
 * three a request: bench/README.md).
 *
 * The mapping is safe to read while this process has the database open:
 * SQLite truncates or sets up the file afresh only when no connection holds
 * it open, and each of ours holds a lock on it.
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
  /** Whether the header is read from a mapping of the file (no system call) rather than from the file. */
  readonly mapped: boolean;
  close(): void;
}

export function walIndexHeader(db: Db, options: { map?: boolean } = {}): WalIndexHeader | null {
  const { map = true } = options;
  if (db.memory || (process.platform !== 'linux' && process.platform !== 'darwin')) return null;
  let fd: number;
  try {
    // Named after the database's real path, as SQLite names it, symbolic links followed.
    fd = openSync(`${realpathSync(db.name)}-shm`, 'r');
  } catch {
    return null;
  }
  const readFile = (into: Buffer) => {
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
  const known = readFile(first) && version(first) === WAL_INDEX_VERSION && first[IS_INIT] === 1;
  let mapping = known && map ? mapped(fd) : null;
  const read = mapping === null ? readFile : (into: Buffer) => mapping!.copy(into, 0, 0, WAL_INDEX_HEADER_BYTES) === WAL_INDEX_HEADER_BYTES;
  let open = true;
  return {
    read: (into) => known && open && read(into),
    mapped: mapping !== null,
    close() {
      // Never read again: the mapping goes with its last reference.
      mapping = null;
      if (open) closeSync(fd);
      open = false;
    },
  };
}

/** The header's bytes as mapped from the open `-shm` file, or null where it cannot be mapped (then it is read from the file). */
function mapped(fd: number): Buffer | null {
  if (mapFile === null) return null;
  try {
    return mapFile(fd, WAL_INDEX_HEADER_BYTES);
  } catch {
    return null;
  }
}
