import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { turnDestination } from '../src/logging/turn-destination.js';

const endOfTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('turnDestination', () => {
  it("writes a turn's lines together, in order, once the turn's work is done", async () => {
    const writes: string[] = [];
    const log = turnDestination({ write: (text: string) => writes.push(text) });
    log.write('{"msg":"a"}\n');
    log.write('{"msg":"b"}\n');
    log.write('{"msg":"c"}\n');
    assert.deepEqual(writes, [], 'nothing is written during the turn');
    await endOfTurn();
    assert.deepEqual(writes, ['{"msg":"a"}\n{"msg":"b"}\n{"msg":"c"}\n']);

    log.write('{"msg":"d"}\n');
    await endOfTurn();
    assert.deepEqual(writes.slice(1), ['{"msg":"d"}\n'], 'a lone line goes out at the end of its own turn');
  });

  it('flush writes the lines held back at once, and the end of the turn then has nothing left to write', async () => {
    const writes: string[] = [];
    const log = turnDestination({ write: (text: string) => writes.push(text) });
    log.write('{"msg":"last words"}\n');
    log.flush();
    assert.deepEqual(writes, ['{"msg":"last words"}\n']);
    await endOfTurn();
    assert.deepEqual(writes, ['{"msg":"last words"}\n']);
  });
});
