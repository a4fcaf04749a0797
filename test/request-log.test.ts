import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino, symbols } from 'pino';
import { completedLine, loggerOptions, type CompletedRequest } from '../src/logging/request-log.js';

/** A pino logger with the options Folio gives Fastify (loggerOptions), writing to `lines`. */
function pinoLines() {
  const lines: string[] = [];
  const root = pino(loggerOptions('info'), { write: (line: string) => void lines.push(line) });
  return { root, lines };
}

const sameTime = (line: string) => line.replace(/^\{"level":30,"time":\d+,/, '{"level":30,"time":0,');

describe('completedLine', () => {
  it('writes the bytes pino writes for the same fields through a request logger', () => {
    const { root, lines } = pinoLines();
    const ids = ['3f1c0c6e-8a0b-4d3e-9c55-0d9f1f6a2b7e', 'trace-me-1', 'a.b:c_d-e', 'x'.repeat(128)];
    const urls = [
      '/v1/me',
      '/v1/documents?limit=20&q=cliprest',
      `/v1/documents/${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}?x=${'y'.repeat(60)}`,
      '/v1/documents?q="quoted"&back=\\slash',
      '/v1/nowhere/\u00e9\u00ff\u0080',
      '/v1/ctl\u0001\u001f\u007f',
      '/v1/emoji/\u{1f600}/\u2028\u2029',
      '',
    ];
    const fields: CompletedRequest[] = [];
    for (const url of urls) {
      for (const remoteAddress of ['127.0.0.1', '::ffff:10.0.0.7', undefined]) {
        fields.push({ method: 'GET', url, statusCode: 200, responseTime: 1.23, remoteAddress });
      }
    }
    for (const responseTime of [0, 0.01, 12.5, 1234567.89, Number.NaN, Number.POSITIVE_INFINITY]) {
      fields.push({ method: 'PATCH', url: '/v1/documents/x', statusCode: 409, responseTime, remoteAddress: '127.0.0.1' });
    }
    for (const statusCode of [201, 304, 400, 401, 404, 429, 500, 503]) {
      fields.push({ method: 'POST', url: '/v1/documents', statusCode, responseTime: 3.5, remoteAddress: '127.0.0.1' });
    }
    let compared = 0;
    for (const id of ids) {
      const request = root.child({ reqId: id });
      const chindings = (request as unknown as Record<symbol, string>)[symbols.chindingsSym]!;
      for (const f of fields) {
        lines.length = 0;
        request.info({ ...f }, 'request completed');
        assert.equal(lines.length, 1);
        assert.equal(sameTime(completedLine(Date.now(), chindings, f)), sameTime(lines[0]!), JSON.stringify(f));
        compared += 1;
      }
    }
    assert.equal(compared, ids.length * fields.length);
  });

  it('is one line of JSON that reads back as its fields', () => {
    const { root } = pinoLines();
    const request = root.child({ reqId: 'r-1' });
    const chindings = (request as unknown as Record<symbol, string>)[symbols.chindingsSym]!;
    const line = completedLine(1_795_000_000_000, chindings, {
      method: 'GET',
      url: '/v1/documents?q="a\\b"\n',
      statusCode: 200,
      responseTime: 0.25,
      remoteAddress: '127.0.0.1',
    });
    assert.ok(line.endsWith('}\n') && line.indexOf('\n') === line.length - 1);
    const parsed = JSON.parse(line);
    assert.deepEqual(
      [parsed.level, parsed.time, parsed.reqId, parsed.url, parsed.statusCode, parsed.responseTime, parsed.msg],
      [30, 1_795_000_000_000, 'r-1', '/v1/documents?q="a\\b"\n', 200, 0.25, 'request completed'],
    );
    assert.equal(parsed.pid, process.pid);
  });
});
