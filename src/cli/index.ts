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

// Output that cannot be written (a reader that went away, a full disk) is
// reported in one line and fails the command, not thrown as a stack trace:
// the caller did not get what the command printed (a new key, say).
let outputLost = false;
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (!outputLost) process.stderr.write(`folio: cannot write to standard output: ${err.code ?? err.message}\n`);
  outputLost = true;
  process.exitCode = 1;
});
process.stderr.on('error', () => {
  process.exitCode = 1;
});

const status = !loadEnvFile() ? 1 : await run(process.argv.slice(2), {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  env: process.env,
});
process.exitCode = outputLost ? 1 : status;
