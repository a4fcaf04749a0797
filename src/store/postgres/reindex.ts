import { foldTitle } from '../../domain/search.js';
import { NewerSchema } from '../newer-schema.js';
import type { Session } from './database.js';
import { DOCUMENTS_WITH_CONTENT } from './migrations.js';
import { contentLexemes, searchVectorSql, SEARCH_WORDS, titleLexemes } from './search.js';

/**
 * The Unicode version of Folio's folding (foldText, foldTitle): Node.js's
 * own, from its ICU data, as the SQLite store records it. A Node.js of
 * another Unicode version may fold a character otherwise, and the words an
 * edit writes would then no longer be the words its search looks for.
 */
export const SEARCH_UNICODE: string = process.versions.unicode ?? 'unknown';

/** Told before the search words are made again: the Unicode version they were made with (null: not recorded) and this Node.js's; the same twice when Folio makes them otherwise now. */
export type ReindexNotice = (from: string | null, to: string) => void;

/** Rows per statement: documents are read whole to make their words again. */
const BATCH = 100;

/** What the search words were made with, as search_index_facts records it (null: not recorded). */
export async function searchWordsMadeWith(db: Session): Promise<{ unicode: string | null; words: string | null }> {
  const { rows } = await db.query<{ name: string; value: string }>(`SELECT name, value FROM search_index_facts WHERE name IN ('unicode', 'words')`);
  const fact = (name: string) => rows.find((r) => r.name === name)?.value ?? null;
  return { unicode: fact('unicode'), words: fact('words') };
}

/** Whether the search words are made as this Folio and this Node.js make them. */
export const searchWordsCurrent = (made: { unicode: string | null; words: string | null }): boolean =>
  made.unicode === SEARCH_UNICODE && made.words === SEARCH_WORDS;

/**
 * Refuses words of a later design than this Folio's: making them again
 * would undo what the newer Folio's searches rely on.
 */
export function refuseNewerWords(made: { words: string | null }): void {
  if (made.words !== null && Number(made.words) > Number(SEARCH_WORDS)) {
    throw new NewerSchema(`the database's search words are of design ${made.words}, and this Folio makes design ${SEARCH_WORDS}`);
  }
}

/**
 * Inside the migrations' transaction: if the search words were made with
 * another Unicode version than this Node.js's, or by another design of
 * them (SEARCH_WORDS; none recorded is the first), makes every document's
 * words and every chat's folded title again, telling `onReindex` first
 * (with the same Unicode version twice when only the design changed), then
 * records both. A schema made by this very run (`existed` false) has
 * nothing to make again. Two processes of different Node.js versions on one
 * database would do it in turns, each time one of them starts, as with SQLite.
 */
export async function refoldIfStale(db: Session, existed: boolean, onReindex?: ReindexNotice): Promise<void> {
  const made = await searchWordsMadeWith(db);
  if (searchWordsCurrent(made)) return;
  if (existed) {
    onReindex?.(made.unicode, SEARCH_UNICODE);
    await refoldDocuments(db);
    await refoldChats(db);
  }
  await db.query(
    `INSERT INTO search_index_facts (name, value) VALUES ('unicode', $1), ('words', $2)
     ON CONFLICT (name) DO UPDATE SET value = excluded.value`,
    [SEARCH_UNICODE, SEARCH_WORDS],
  );
}

type DocumentText = { id: string; title: string; content: string };

async function refoldDocuments(db: Session): Promise<void> {
  for (let after = ''; ; ) {
    const { rows } = await db.query<DocumentText>(
      `SELECT d.id, d.title, c.content ${DOCUMENTS_WITH_CONTENT} WHERE d.id > $1 ORDER BY d.id LIMIT $2`,
      [after, BATCH],
    );
    if (rows.length === 0) return;
    const words = rows.map((d) => ({ id: d.id, title: titleLexemes(d.title), content: contentLexemes(d.content) }));
    await db.query(
      `UPDATE documents d SET title_words = v.title, search = ${searchVectorSql('v.title', 'v.content', 'd.workspace_id', 'd.project_id')}
       FROM jsonb_to_recordset($1::jsonb) AS v (id text, title text[], content text[]) WHERE d.id = v.id`,
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
