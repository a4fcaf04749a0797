import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { RETRY_MS, turnDestination } from '../src/logging/turn-destination.js';

/**
 * The retry timer is node:test's mock: it fires only when a test moves the
 * clock, however long the machine takes between two turns, and it is gone
 * when the test ends, passed or failed. (With real timers a busy machine let
 * a retry fire between two turns, and the failed test's destination went on
 * retrying, which held the test file open.)
 */
const mockRetries = (t: TestContext) => t.mock.timers.enable({ apis: ['setTimeout'] });

const endOfTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
const eagain = () => Object.assign(new Error('resource temporarily unavailable'), { code: 'EAGAIN' });

/** A destination onto a standard output that records what it took, and refuses writes while `full` is set. */
function fakeOutput(options: Omit<Parameters<typeof turnDestination>[0], 'write'> = {}) {
  const out = { writes: [] as string[], full: false, attempts: 0, most: Infinity };
  const write = (bytes: Buffer) => {
    out.attempts++;
    if (out.full) throw eagain();
    const n = Math.min(bytes.length, out.most);
    out.writes.push(bytes.subarray(0, n).toString());
    return n;
  };
  return { out, log: turnDestination({ ...options, write }) };
}

describe('turnDestination', () => {
  it("writes a turn's lines together, in order, once the turn's work is done", async () => {
    const { out, log } = fakeOutput();
    log.write('{"msg":"a"}\n');
    log.write('{"msg":"b"}\n');
    log.write('{"msg":"c"}\n');
    assert.deepEqual(out.writes, [], 'nothing is written during the turn');
    await endOfTurn();
    assert.deepEqual(out.writes, ['{"msg":"a"}\n{"msg":"b"}\n{"msg":"c"}\n']);

    log.write('{"msg":"d"}\n');
    await endOfTurn();
    assert.deepEqual(out.writes.slice(1), ['{"msg":"d"}\n'], 'a lone line goes out at the end of its own turn');
  });

  it('keeps what a full pipe refuses, and what comes after, and writes it all in order once the pipe takes it', async (t) => {
    mockRetries(t);
    const { out, log } = fakeOutput();
    out.full = true;
    log.write('{"msg":"a"}\n');
    await endOfTurn();
    log.write('{"msg":"b"}\n');
    await endOfTurn();
    assert.deepEqual(out.writes, []);
    assert.equal(out.attempts, 1, 'the later turn queues behind the refused text instead of trying again at once');
    t.mock.timers.tick(RETRY_MS - 1);
    assert.equal(out.attempts, 1);
    t.mock.timers.tick(1);
    assert.equal(out.attempts, 2, `tried again ${RETRY_MS} ms later`);
    t.mock.timers.tick(RETRY_MS);
    assert.equal(out.attempts, 3, 'and again while the pipe is full');

    out.full = false;
    out.most = 5; // and the pipe takes only part of each write
    t.mock.timers.tick(RETRY_MS);
    assert.equal(out.writes.join(''), '{"msg":"a"}\n{"msg":"b"}\n');
    const attempts = out.attempts;
    t.mock.timers.tick(RETRY_MS * 3);
    assert.equal(out.attempts, attempts, 'nothing is tried once all is written');
  });

  it('drops new lines past its limit while the pipe takes nothing, then says how many', async (t) => {
    mockRetries(t);
    const { out, log } = fakeOutput({ mostPending: 50, now: () => 1234 });
    const line = '{"msg":"0123456789"}\n'; // 21 bytes
    out.full = true;
    for (let i = 0; i < 5; i++) {
      log.write(line);
      await endOfTurn();
    }
    out.full = false;
    t.mock.timers.tick(RETRY_MS);
    assert.equal(
      out.writes.join(''),
      line + line + '{"level":40,"time":1234,"msg":"3 log lines dropped: standard output took nothing for too long"}\n',
    );
  });

  it('drops lines silently once standard output is closed', async () => {
    const log = turnDestination({
      write: () => {
        throw Object.assign(new Error('broken pipe'), { code: 'EPIPE' });
      },
    });
    log.write('{"msg":"nobody reads this"}\n');
    await endOfTurn();
    log.write('{"msg":"nor this"}\n');
    log.flush();
  });

  it('flush writes the held and the waiting lines at once, and the end of the turn then has nothing left to write', async (t) => {
    mockRetries(t);
    const { out, log } = fakeOutput();
    out.full = true;
    log.write('{"msg":"waiting"}\n');
    await endOfTurn();
    out.full = false;
    log.write('{"msg":"last words"}\n');
    log.flush();
    assert.deepEqual(out.writes, ['{"msg":"waiting"}\n', '{"msg":"last words"}\n']);
    await endOfTurn();
    t.mock.timers.tick(RETRY_MS * 2);
    assert.equal(out.writes.length, 2);
    log.write('{"msg":"from a later exit handler"}\n');
    assert.deepEqual(out.writes.slice(2), ['{"msg":"from a later exit handler"}\n'], 'after flush, lines go out as they come');
  });

  it('says at exit how many lines it could not write, those it dropped included', async (t) => {
    mockRetries(t);
    const reports: string[] = [];
    const { out, log } = fakeOutput({ mostPending: 40, report: (text: string) => reports.push(text) });
    out.full = true;
    log.write('{"msg":"first"}\n');
    await endOfTurn();
    // Past the 40 bytes that may wait: dropped and counted.
    log.write('{"msg":"second, too long to wait behind the first"}\n');
    await endOfTurn();
    log.flush();
    assert.deepEqual(reports, ['Folio: 2 log lines were lost at exit: standard output took nothing for a second.\n']);
    assert.deepEqual(out.writes, []);
  });

  it('says nothing at exit when everything was written', async () => {
    const reports: string[] = [];
    const { out, log } = fakeOutput({ report: (text: string) => reports.push(text) });
    log.write('{"msg":"one"}\n');
    log.flush();
    assert.deepEqual(out.writes, ['{"msg":"one"}\n']);
    assert.deepEqual(reports, []);
  });

  it('does not keep the process alive while the pipe stays full: it exits, after flush has tried for a second', () => {
    // A process whose standard output never takes a write again: the retries
    // go on until nothing else is left, then the exit's flush gives up.
    const script = `
      import { turnDestination } from ${JSON.stringify(new URL('../src/logging/turn-destination.ts', import.meta.url).href)};
      let attempts = 0;
      const log = turnDestination({ write: () => { attempts++; throw Object.assign(new Error('full'), { code: 'EAGAIN' }); } });
      process.once('exit', () => { log.flush(); process.stderr.write(String(attempts)); });
      log.write('{"msg":"stuck"}\\n');
      log.write('{"msg":"stuck too"}\\n');
      setTimeout(() => {}, 50); // the server's last work
    `;
    const started = Date.now();
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(run.error, undefined, 'the process did not exit while its log could not be written');
    assert.equal(run.status, 0, run.stderr);
    const attempts = Number(/(\d+)$/.exec(run.stderr)?.[1]);
    assert.ok(attempts > 100, `retried while running, then at exit (${attempts} attempts)`);
    assert.match(run.stderr, /Folio: 2 log lines were lost at exit: standard output took nothing for a second\.\n/);
    assert.ok(Date.now() - started < 20_000);
  });
});
