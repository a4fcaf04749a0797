import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig, withPort } from '../src/config.js';

describe('configuration', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    assert.equal(c.port, 8787);
    assert.equal(c.host, '127.0.0.1');
    assert.deepEqual(c.database, { kind: 'sqlite', file: './data/folio.db' });
    assert.equal(c.redisUrl, null);
    assert.equal(c.publicAppUrl, 'http://127.0.0.1:8787');
    assert.deepEqual(c.apiPlans, ['pro', 'team', 'enterprise']);
    assert.equal(c.readLimitPerMin, 120);
    assert.equal(c.writeLimitPerMin, 30);
    assert.equal(c.maxBodyBytes, 5 * 1024 * 1024);
    assert.equal(c.bodyBytesInFlight, 8 * 1024 * 1024);
    assert.equal(c.logLevel, 'info');
    assert.equal(c.requestTimeoutS, 60);
    // Never less than one body of the largest size.
    assert.equal(loadConfig({ MAX_BODY_BYTES: String(20 * 1024 * 1024) }).bodyBytesInFlight, 20 * 1024 * 1024);
    assert.equal(loadConfig({ MAX_BODY_BYTES: String(128 * 1024 * 1024) }).maxBodyBytes, 128 * 1024 * 1024);
  });

  it('reads every variable', () => {
    const c = loadConfig({
      PORT: '9000',
      HOST: '0.0.0.0',
      DATABASE_URL: 'sqlite:/var/lib/folio/folio.db',
      PUBLIC_APP_URL: 'https://docs.example.com/app/',
      API_PLANS: 'gold,silver',
      READ_LIMIT_PER_MIN: '1000',
      WRITE_LIMIT_PER_MIN: '100',
      MAX_BODY_BYTES: '2048',
      BODY_BYTES_IN_FLIGHT: '65536',
      LOG_LEVEL: 'warn',
    });
    assert.equal(c.port, 9000);
    assert.equal(c.host, '0.0.0.0');
    assert.deepEqual(c.database, { kind: 'sqlite', file: '/var/lib/folio/folio.db' });
    assert.equal(c.publicAppUrl, 'https://docs.example.com/app');
    assert.deepEqual(c.apiPlans, ['gold', 'silver']);
    assert.equal(c.readLimitPerMin, 1000);
    assert.equal(c.writeLimitPerMin, 100);
    assert.equal(c.maxBodyBytes, 2048);
    assert.equal(c.bodyBytesInFlight, 65536);
    assert.equal(c.logLevel, 'warn');
    assert.equal(loadConfig({ HOST: '0.0.0.0' }).publicAppUrl, 'http://localhost:8787');
    for (const host of ['localhost', 'folio-1.internal.example', '10.0.0.7', '::1', 'fe80::1', 'fe80::1%lo', 'db1.example']) assert.equal(loadConfig({ HOST: host }).host, host);
    // The server's own address, and the default base of the `url` fields: a URL holds no IPv6 zone.
    assert.equal(loadConfig({ HOST: 'fe80::1%lo' }).publicAppUrl, 'http://[fe80::1]:8787');
    assert.equal(loadConfig({ HOST: '::1', PORT: '9000' }).serverUrl, 'http://[::1]:9000');
    assert.equal(loadConfig({ HOST: '::', PUBLIC_APP_URL: 'https://docs.example.com' }).serverUrl, 'http://localhost:8787');
  });

  it('names the port the system chose for PORT 0, in the url fields only when PUBLIC_APP_URL is not set', () => {
    const chosen = withPort(loadConfig({ PORT: '0', HOST: '::1' }), 41234);
    assert.equal(chosen.port, 41234);
    assert.equal(chosen.serverUrl, 'http://[::1]:41234');
    assert.equal(chosen.publicAppUrl, 'http://[::1]:41234');
    const set = withPort(loadConfig({ PORT: '0', PUBLIC_APP_URL: 'https://docs.example.com' }), 41234);
    assert.equal(set.serverUrl, 'http://127.0.0.1:41234');
    assert.equal(set.publicAppUrl, 'https://docs.example.com');
  });

  it('takes a Redis URL for rate limits shared by several instances, and never repeats its password', () => {
    assert.equal(loadConfig({ REDIS_URL: 'redis://:hunter2@127.0.0.1:6379/2' }).redisUrl, 'redis://:hunter2@127.0.0.1:6379/2');
    assert.equal(loadConfig({ REDIS_URL: 'rediss://cache.example:6380' }).redisUrl, 'rediss://cache.example:6380');
    for (const bad of ['redis://:hunter2@127.0.0.1:6379/cache', 'http://u:hunter2@127.0.0.1:6379', 'redis://127.0.0.1:6379/0?password=hunter2', 'redis://127.0.0.1:6379#hunter2']) {
      assert.throws(
        () => loadConfig({ REDIS_URL: bad }),
        (err: unknown) => err instanceof ConfigError && err.variable === 'REDIS_URL' && !err.message.includes('hunter2'),
      );
    }
  });

  it('reads a PostgreSQL URL, with its pool size, and keeps the URL as given', () => {
    for (const url of ['postgres://folio:secret@db.example:5433/folio?sslmode=require', 'postgresql://postgres@127.0.0.1/test']) {
      assert.deepEqual(loadConfig({ DATABASE_URL: url }).database, { kind: 'postgres', url, poolMax: 10 });
    }
    assert.deepEqual(loadConfig({ DATABASE_URL: 'postgres://h/db', DATABASE_POOL_MAX: '25' }).database, { kind: 'postgres', url: 'postgres://h/db', poolMax: 25 });
    assert.throws(
      () => loadConfig({ DATABASE_URL: 'postgres://folio:hunter2@db.example' }),
      (err: unknown) => err instanceof ConfigError && err.variable === 'DATABASE_URL' && /names no database/.test(err.message) && !err.message.includes('hunter2'),
    );
  });

  it('reads TRUST_PROXY as false, true, a number of hops, or proxy addresses and networks', () => {
    assert.equal(loadConfig({}).trustProxy, false);
    assert.equal(loadConfig({ TRUST_PROXY: 'false' }).trustProxy, false);
    assert.equal(loadConfig({ TRUST_PROXY: 'TRUE' }).trustProxy, true);
    assert.equal(loadConfig({ TRUST_PROXY: '2' }).trustProxy, 2);
    assert.equal(loadConfig({ TRUST_PROXY: '10.0.0.1, 192.168.0.0/16,::1' }).trustProxy, '10.0.0.1,192.168.0.0/16,::1');
    for (const bad of ['yes', '10.0.0.0/33', '10.0.0.1/8/8', 'proxy.example', '-1']) {
      assert.throws(() => loadConfig({ TRUST_PROXY: bad }), (err: unknown) => err instanceof ConfigError && err.variable === 'TRUST_PROXY', bad);
    }
  });

  it('stops on a bad value with a message naming the variable', () => {
    for (const [name, value] of [
      ['PORT', 'eighty'],
      ['PORT', '70000'],
      ['DATABASE_URL', 'mysql://localhost/folio'],
      ['DATABASE_URL', 'sqlite:'],
      ['DATABASE_URL', 'postgres://localhost'],
      ['DATABASE_URL', 'postgres://'],
      ['DATABASE_POOL_MAX', '0'],
      ['REDIS_URL', 'http://127.0.0.1:6379'],
      ['REDIS_URL', '127.0.0.1:6379'],
      ['REDIS_URL', 'redis://:hunter2@127.0.0.1:6379/cache'],
      ['PUBLIC_APP_URL', 'not a url'],
      ['PUBLIC_APP_URL', 'ftp://example.com'],
      ['PUBLIC_APP_URL', 'https://x.example/app?ref=1'],
      ['PUBLIC_APP_URL', 'https://x.example/app#top'],
      // Empty, a query or fragment reads as '' in the URL's fields, and would still come before every path.
      ['PUBLIC_APP_URL', 'http://x.example/?'],
      ['PUBLIC_APP_URL', 'http://x.example/#'],
      ['HOST', 'bad host'],
      ['HOST', 'host_name.example'],
      ['HOST', '-lead.example'],
      // Not host names but malformed IPv4 addresses: they were taken, and then refused as a PUBLIC_APP_URL never set.
      ['HOST', '256.1.1.1'],
      ['HOST', '1.2.3.4.5'],
      ['HOST', 'example.0x1f'],
      ['HOST', 'xn--a.example'],
      ['API_PLANS', ' , '],
      ['API_PLANS', 'Pro Plan'],
      ['READ_LIMIT_PER_MIN', '0'],
      ['WRITE_LIMIT_PER_MIN', '-3'],
      ['MAX_BODY_BYTES', '1.5'],
      // A body is read as one string, which Node.js holds up to 512 MiB: one of 600 MB was a 500.
      ['MAX_BODY_BYTES', String(1024 * 1024 * 1024)],
      ['MAX_BODY_BYTES', String(128 * 1024 * 1024 + 1)],
      ['BODY_BYTES_IN_FLIGHT', 'lots'],
      ['LOG_LEVEL', 'loud'],
    ] as const) {
      assert.throws(
        () => loadConfig({ [name]: value }),
        (err: unknown) => err instanceof ConfigError && err.variable === name && err.message.startsWith(`${name}:`),
        `${name}=${value}`,
      );
    }
  });

  it('names a refused database URL by its scheme only: it may hold a password', () => {
    for (const [value, shown] of [
      ['mysql://folio:s3cret@db.internal/folio', 'unsupported scheme "mysql:"'],
      ['folio:s3cret@db.internal', 'not a database URL'],
      ['//folio:s3cret@db.internal', 'not a database URL'],
    ] as const) {
      assert.throws(
        () => loadConfig({ DATABASE_URL: value }),
        (err: unknown) => err instanceof ConfigError && err.message.includes(shown) && !err.message.includes('s3cret'),
        value,
      );
    }
  });
});
