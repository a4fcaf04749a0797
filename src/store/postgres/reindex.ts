import { foldTitle } from '../../domain/search.js';
import type { Session } from './database.js';
import { documentLexemes } from './search.js';

/**
 * The Unicode version of Folio's folding (foldText, foldTitle): Node.js's
 * own, from its ICU data, as the SQLite store records it. A Node.js of
 * another Unicode version may fold a character otherwise, and the words an
 * edit writes would then no longer be the words its search looks for.
 */
export const SEARCH_UNICODE: string = process.versions.unicode ?? 'unknown';

/** Told before the search words are made again: the Unicode version they were made with (null: not recorded) and this Node.js's. */
export type ReindexNotice = (from: string | null, to: string) => void;

/** Rows per statement: documents are read whole to make their words again. */
const BATCH = 100;

/**
 * Inside the migrations' transaction: if the search words were made with
 * another Unicode version than this Node.js's, makes every document's words
 * and every chat's folded title again, then records the version. A schema
 * made by this very run (`existed` false) has nothing to make again. Two
 * processes of different Node.js versions on one database would do it in
 * turns, each time one of them starts, as with SQLite.
 */
export async function refoldIfUnicodeChanged(db: Session, existed: boolean, onReindex?: ReindexNotice): Promise<void> {
  const built = (await db.query<{ value: string }>(`SELECT value FROM search_index_facts WHERE name = 'unicode'`)).rows[0]?.value ?? null;
  if (built === SEARCH_UNICODE) return;
  if (existed) {
    onReindex?.(built, SEARCH_UNICODE);
    await refoldDocuments(db);
    await refoldChats(db);
  }
  await db.query(
    `INSERT INTO search_index_facts (name, value) VALUES ('unicode', $1) ON CONFLICT (name) DO UPDATE SET value = excluded.value`,
    [SEARCH_UNICODE],
  );
}

type DocumentText = { id: string; title: string; content: string; workspace_id: string; project_id: string | null };

async function refoldDocuments(db: Session): Promise<void> {
  for (let after = ''; ; ) {
    const { rows } = await db.query<DocumentText>(
      'SELECT id, title, content, workspace_id, project_id FROM documents WHERE id > $1 ORDER BY id LIMIT $2',
      [after, BATCH],
    );
    if (rows.length === 0) return;
    const words = rows.map((d) => ({ id: d.id, lexemes: documentLexemes(d.title, d.content, d.workspace_id, d.project_id) }));
    await db.query(
      `UPDATE documents d SET search = array_to_tsvector(v.lexemes)
       FROM jsonb_to_recordset($1::jsonb) AS v (id text, lexemes text[]) WHERE d.id = v.id`,
      [JSON.stringify(words)],
    );
    after = rows.at(-1)!.id;
  }
}

async function refoldChats(db: Session): Promise<void> {
  for (let after = ''; ; ) {
    const { rows } = await db.query<{ id: string; title: string }>(
      'SELECT id, title FROM chats WHERE id > $1 AND title IS NOT NULL ORDER BY id LIMIT $2',
      [after, BATCH],
    );
    if (rows.length === 0) return;
    const folded = rows.map((c) => ({ id: c.id, folded: foldTitle(c.title) }));
    await db.query(
      `UPDATE chats c SET title_folded = v.folded FROM jsonb_to_recordset($1::jsonb) AS v (id text, folded text) WHERE c.id = v.id`,
      [JSON.stringify(folded)],
    );
    after = rows.at(-1)!.id;
  }
}
