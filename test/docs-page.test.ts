import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { call, setup, type TestContext } from './helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
const RESULTS = join(import.meta.dirname, '..', 'test-results');

type Json = Record<string, any>;

describe('API reference page', () => {
  let t: TestContext;
  before(async () => {
    t = await setup();
  });
  after(() => t.close());

  it('is served at /v1/docs without a key', async () => {
    const bare = await call(t.app, 'GET', '/v1/docs');
    assert.equal(bare.status, 301);
    assert.equal(bare.headers.location, '/v1/docs/');
    const page = await call(t.app, 'GET', '/v1/docs/');
    assert.equal(page.status, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.match(page.raw, /<title>Folio — Document Workspace API reference<\/title>/);
  });

  it('references no other origin: no CDN, no web fonts, no remote script', async () => {
    const html = (await call(t.app, 'GET', '/v1/docs/')).raw;
    assert.doesNotMatch(html, /https?:\/\//i, 'no absolute http(s) URL in the page');
    assert.doesNotMatch(html, /(src|href)\s*=\s*["']?\s*\/\//i, 'no protocol-relative URL in the page');
    const sources = [...html.matchAll(/<script[^>]*\ssrc="([^"]*)"/g)].map((m) => m[1]);
    assert.deepEqual(sources, ['js/scalar.js']);
    // Scalar loads its fonts from fonts.scalar.com and enables an AI agent that
    // calls scalar.com unless told otherwise.
    assert.match(html, /"withDefaultFonts": false/);
    assert.match(html, /"agent": \{\s*"disabled": true\s*\}/);
    assert.match(html, /"telemetry": false/);
  });

  it('serves the page script itself', async () => {
    const script = await call(t.app, 'GET', '/v1/docs/js/scalar.js');
    assert.equal(script.status, 200);
    assert.match(String(script.headers['content-type']), /^application\/javascript/);
    assert.ok(script.raw.length > 1_000_000, `the bundle is ${script.raw.length} bytes`);
    assert.match(script.raw, /createApiReference/);
  });
});

describe('API reference page in a browser', () => {
  let t: TestContext;
  let base: string;
  let browser: Browser | undefined;
  before(async () => {
    t = await setup();
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(async () => {
    await browser?.close();
    await t.close();
  });

  it('renders all twelve operations (the spec\'s nine and the three of history) from Folio alone', async (test) => {
    if (!existsSync(CHROMIUM)) {
      test.skip(`no Chromium at ${CHROMIUM}: install Debian's chromium (apt-get install -y chromium) to run the browser test of /v1/docs`);
      return;
    }
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const requested: string[] = [];
    const failures: string[] = [];
    page.on('request', (r) => requested.push(r.url()));
    page.on('requestfailed', (r) => failures.push(`${r.url()}: ${r.failure()?.errorText}`));
    page.on('pageerror', (e) => failures.push(`page error: ${e.message}`));

    await page.goto(`${base}/v1/docs`, { waitUntil: 'networkidle' });
    assert.equal(new URL(page.url()).pathname, '/v1/docs/');
    await page.getByText('Document Workspace API', { exact: true }).first().waitFor();
    mkdirSync(RESULTS, { recursive: true });
    await page.screenshot({ path: join(RESULTS, 'docs-page.png') });

    // Each operation of the document is listed in the sidebar and opens its
    // section, which shows the operation id.
    const document: Json = await (await fetch(`${base}/v1/openapi.json`)).json();
    const operations = Object.values<Json>(document.paths).flatMap((item) => Object.values<Json>(item));
    assert.deepEqual(
      operations.map((o) => o.operationId).sort(),
      ['createDocument', 'getDocument', 'getMe', 'getRevision', 'listChats', 'listDocuments', 'listOrganizations', 'listProjects', 'listRevisions', 'listTemplates', 'restoreRevision', 'updateDocument'],
    );
    for (const operation of operations) {
      const entry = page.locator('aside').getByText(operation.summary, { exact: true }).filter({ visible: true });
      await entry.first().click();
      await page.getByText(operation.operationId, { exact: true }).first().waitFor({ state: 'visible' });
    }
    await page.screenshot({ path: join(RESULTS, 'docs-page-operation.png') });

    const origin = new URL(base).origin;
    const elsewhere = requested.filter((url) => !url.startsWith('data:') && !url.startsWith('blob:') && new URL(url).origin !== origin);
    assert.deepEqual(elsewhere, [], 'every request of the page goes to Folio');
    assert.ok(requested.includes(`${origin}/v1/docs/js/scalar.js`));
    assert.ok(requested.includes(`${origin}/v1/docs/openapi.json`));
    assert.deepEqual(failures, []);
  });
});
