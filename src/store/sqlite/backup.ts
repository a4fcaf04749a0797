import Database from 'better-sqlite3';
import { closeSync, existsSync, fsyncSync, linkSync, lstatSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ConfigError } from '../../config.js';
import { UsageError } from '../../errors.js';
import { LOCK_WAIT_MS } from '../lock-wait.js';
import { isBusy, isOpenRefusal, type Db } from './database.js';

export interface BackupResult {
  /** The copy's absolute path. */
  file: string;
  bytes: number;
}

/**
 * Copies the SQLite database `source` to `target`, a file that must not
 * exist yet, with SQLite's online backup, while servers go on writing to
 * the database. The copy holds one state of the database: every commit made
 * before the backup began, none made after. It is written under a temporary
 * name beside `target` and given its name once whole, so that a backup that
 * fails or is interrupted never leaves a partial file under `target`'s name.
 */
export async function backupDatabase(source: string, target: string): Promise<BackupResult> {
  const file = resolve(target);
  refuseExisting(file);
  if (!existsSync(dirname(file))) throw new UsageError(`cannot write the backup "${file}": the folder "${dirname(file)}" does not exist`);
  // Beside the target, so that the link stays on one file system; its
  // name says what it is if a killed backup leaves it behind.
  const partial = `${file}.${process.pid}.partial`;
  const db = openSource(source);
  removePartial(partial); // one a killed backup of an earlier process with this id left
  try {
    await db.backup(partial);
    // The copy says WAL, as the database does: opened, even to be read, it
    // would grow -wal and -shm files beside it. In rollback mode it stays
    // one file; a server opened on it after a restore turns WAL on again.
    const copy = new Database(partial, { fileMustExist: true });
    try {
      copy.pragma('journal_mode = DELETE');
    } finally {
      copy.close();
    }
  } catch (err) {
    removePartial(partial);
    if (isBusy(err)) throw err;
    throw new UsageError(`cannot back up "${source}" to "${file}": ${(err as Error).message}`);
  } finally {
    db.close();
  }
  try {
    giveName(partial, file);
  } catch (err) {
    removePartial(partial);
    throw err;
  }
  removePartial(partial);
  // The link itself survives a power cut only once its folder is on disk
  // (the copy's pages are: SQLite synced them when the backup committed).
  const folder = openSync(dirname(file), 'r');
  try {
    fsyncSync(folder);
  } finally {
    closeSync(folder);
  }
  return { file, bytes: statSync(file).size };
}

/**
 * Gives the whole copy `partial` the name `file`. A link, unlike a rename,
 * fails if another process made the file meanwhile (EEXIST), which is then
 * left alone. File systems without hard links (exFAT and FAT, as on most
 * removable disks, and some network shares) refuse the link itself; the copy
 * is renamed there instead, once `file` is found still missing: only a file
 * made under that very name in the instant between the two would be replaced.
 */
function giveName(partial: string, file: string): void {
  try {
    linkSync(partial, file);
    return;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === 'EEXIST') refuseExisting(file);
    if (typeof code !== 'string' || !NO_HARD_LINKS.has(code)) throw err;
  }
  refuseExisting(file);
  renameSync(partial, file);
}

/** link(2)'s answers on a file system that makes no hard links. */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

function refuseExisting(file: string): void {
  // lstat, not exists: a link to nowhere is not to be replaced either.
  if (lstatSync(file, { throwIfNoEntry: false }) !== undefined) {
    throw new UsageError(`"${file}" already exists; folio backup never overwrites a file: name a new one, or remove that one first`);
  }
}

/**
 * Opens the database to copy, which must exist (it is never created), and
 * begins one read on it. The backup then copies every page from that read's
 * state, whatever servers commit meanwhile (WAL keeps the state for this
 * reader). Without the read, SQLite starts the copy again after every
 * commit of another process, and under a steady stream of writes it might
 * never finish.
 */
function openSource(source: string): Db {
  if (source === ':memory:') {
    throw new ConfigError('DATABASE_URL', 'sqlite::memory: is a database in one process\'s memory, which no other process can read: there is nothing to back up');
  }
  if (!existsSync(source)) {
    throw new ConfigError('DATABASE_URL', `the database file "${source}" does not exist; point DATABASE_URL at the database to back up`);
  }
  let db: Db | undefined;
  try {
    db = new Database(source, { fileMustExist: true });
    db.pragma(`busy_timeout = ${LOCK_WAIT_MS}`);
    db.exec('BEGIN');
    // A deferred transaction reads nothing until asked: this starts the read.
    db.prepare('SELECT count(*) FROM sqlite_schema').pluck().get();
    return db;
  } catch (err) {
    db?.close();
    if (isOpenRefusal(err)) {
      throw new ConfigError('DATABASE_URL', `cannot open the database file "${source}": ${(err as Error).message}`);
    }
    throw err;
  }
}

/** The temporary copy, and what SQLite may have left beside it while writing it. */
function removePartial(partial: string): void {
  for (const suffix of ['', '-journal', '-wal', '-shm']) rmSync(`${partial}${suffix}`, { force: true });
}
