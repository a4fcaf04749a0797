#!/usr/bin/env -S node --max-semi-space-size=4 --heap-growing-percent=30
import { existsSync } from 'node:fs';
import { run } from './program.js';

// A .env file in the working directory supplies configuration, as for the server.
if (existsSync('.env')) process.loadEnvFile('.env');

process.exitCode = await run(process.argv.slice(2), {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  env: process.env,
});
