import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** Where `npm ci` builds Folio's native addon (binding.gyp, native/shared-map.c), below the package's root. */
const ADDON = join('build', 'Release', 'folio_shared_map.node');

/**
 * Maps the first `bytes` of an open file, read-only and shared, so that what
 * other processes write to the file through their own mappings is seen
 * without a system call. The file must be at least that long and must not
 * be truncated while the mapping is read (a read past its end stops the
 * process); the mapping goes when the returned buffer is collected.
 */
export type MapFile = (fd: number, bytes: number) => Buffer;

/**
 * The addon's `map`, or null where it was not built (a system other than
 * Linux or macOS, a failed build): callers then read the file instead. Looked
 * for from this file's folder upwards, so that it is found from `src/`,
 * `dist/` and the benchmark's compiled copy alike.
 */
export const mapFile: MapFile | null = loadAddon();

function loadAddon(): MapFile | null {
  if (process.platform !== 'linux' && process.platform !== 'darwin') return null;
  for (let dir = import.meta.dirname; ; dir = dirname(dir)) {
    const file = join(dir, ADDON);
    if (existsSync(file)) {
      const addon = createRequire(import.meta.url)(file) as { map(fd: number, bytes: number): ArrayBuffer };
      return (fd, bytes) => Buffer.from(addon.map(fd, bytes));
    }
    if (dirname(dir) === dir) return null;
  }
}
