#!/usr/bin/env -S node --max-semi-space-size=8 --heap-growing-percent=30
import { existsSync, statSync } from 'node:fs';
import { run } from './program.js';

// A .env file in the working directory supplies configuration, as for the server.
function loadEnvFile(): boolean {
  if (!existsSync('.env')) return true;
  let problem: string;
  try {
    if (statSync('.env').isFile()) {
      process.loadEnvFile('.env');
      return true;
    }
    problem = 'it is not a file';
  } catch (err) {
    problem = (err as Error).message;
  }
  process.stderr.write(`folio: .env: cannot read the configuration file in ${process.cwd()}: ${problem}\n`);
  return false;
}

process.exitCode = !loadEnvFile() ? 1 : await run(process.argv.slice(2), {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  env: process.env,
});
