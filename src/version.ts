import { createRequire } from 'node:module';

/** Folio's version, as package.json states it. */
export const FOLIO_VERSION: string = (createRequire(import.meta.url)('../package.json') as { version: string }).version;
