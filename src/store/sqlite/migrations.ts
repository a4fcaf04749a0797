/**
 * SQLite schema, as an ordered list of migrations. `PRAGMA user_version`
 * records how many have run, so running them again changes nothing.
 *
 * Workspaces: `workspace_id` is a user id (personal workspace) or an
 * organization id (team workspace). Timestamps are ISO 8601 text in one fixed
 * form, so text order is time order.
 */
export const migrations: readonly string[] = [
  `
  CREATE TABLE users (
    id          TEXT PRIMARY KEY,
    email       TEXT NOT NULL UNIQUE COLLATE NOCASE,
    name        TEXT,
    plan        TEXT,
    created_at  TEXT NOT NULL
  );

  CREATE TABLE organizations (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    plan        TEXT,
    created_at  TEXT NOT NULL
  );

  CREATE TABLE memberships (
    org_id      TEXT NOT NULL REFERENCES organizations(id),
    user_id     TEXT NOT NULL REFERENCES users(id),
    joined_at   TEXT NOT NULL,
    joined_seq  INTEGER NOT NULL,
    PRIMARY KEY (org_id, user_id)
  ) WITHOUT ROWID;
  CREATE INDEX memberships_by_user ON memberships (user_id, joined_at, joined_seq);

  CREATE TABLE api_keys (
    id            TEXT PRIMARY KEY,
    user_id       TEXT NOT NULL REFERENCES users(id),
    name          TEXT,
    hash          BLOB NOT NULL UNIQUE,
    last4         TEXT NOT NULL,
    can_write     INTEGER NOT NULL,
    created_at    TEXT NOT NULL,
    last_used_at  TEXT,
    revoked_at    TEXT
  );
  CREATE INDEX api_keys_by_user ON api_keys (user_id, created_at);

  CREATE TABLE projects (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL,
    is_org        INTEGER NOT NULL,
    creator_id    TEXT NOT NULL REFERENCES users(id),
    name          TEXT NOT NULL,
    description   TEXT,
    created_at    TEXT NOT NULL
  );
  CREATE INDEX projects_by_workspace ON projects (workspace_id, created_at DESC, id DESC);

  CREATE TABLE project_shares (
    project_id  TEXT NOT NULL REFERENCES projects(id),
    user_id     TEXT NOT NULL REFERENCES users(id),
    PRIMARY KEY (project_id, user_id)
  ) WITHOUT ROWID;
  CREATE INDEX project_shares_by_user ON project_shares (user_id, project_id);

  CREATE TABLE templates (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace_id  TEXT,
    creator_id    TEXT REFERENCES users(id),
    title         TEXT NOT NULL,
    description   TEXT,
    is_default    INTEGER NOT NULL DEFAULT 0,
    created_at    TEXT NOT NULL
  );
  CREATE INDEX templates_by_workspace ON templates (workspace_id, created_at DESC);

  CREATE TABLE chats (
    id             TEXT PRIMARY KEY,
    workspace_id   TEXT NOT NULL,
    creator_id     TEXT NOT NULL REFERENCES users(id),
    project_id     TEXT REFERENCES projects(id),
    title          TEXT,
    title_folded   TEXT,
    message_count  INTEGER NOT NULL DEFAULT 0,
    created_at     TEXT NOT NULL,
    updated_at     TEXT,
    sort_at        TEXT GENERATED ALWAYS AS (coalesce(updated_at, created_at)) VIRTUAL
  );
  CREATE INDEX chats_by_workspace ON chats (workspace_id, sort_at DESC, id DESC);
  CREATE INDEX chats_by_project ON chats (project_id, sort_at DESC, id DESC);

  -- seq is the row id the search index refers to.
  CREATE TABLE documents (
    seq           INTEGER PRIMARY KEY,
    id            TEXT NOT NULL UNIQUE,
    workspace_id  TEXT NOT NULL,
    creator_id    TEXT NOT NULL REFERENCES users(id),
    project_id    TEXT REFERENCES projects(id),
    thread_id     TEXT,
    title         TEXT NOT NULL,
    content       TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    updated_at    TEXT,
    sort_at       TEXT GENERATED ALWAYS AS (coalesce(updated_at, created_at)) VIRTUAL
  );
  CREATE INDEX documents_by_workspace ON documents (workspace_id, sort_at DESC, id DESC);
  CREATE INDEX documents_by_project ON documents (project_id, sort_at DESC, id DESC);

  CREATE VIRTUAL TABLE documents_fts USING fts5 (
    title, content,
    content = 'documents', content_rowid = 'seq',
    tokenize = 'unicode61 remove_diacritics 2',
    prefix = '2 3'
  );
  CREATE TRIGGER documents_fts_insert AFTER INSERT ON documents BEGIN
    INSERT INTO documents_fts (rowid, title, content) VALUES (new.seq, new.title, new.content);
  END;
  CREATE TRIGGER documents_fts_delete AFTER DELETE ON documents BEGIN
    INSERT INTO documents_fts (documents_fts, rowid, title, content) VALUES ('delete', old.seq, old.title, old.content);
  END;
  CREATE TRIGGER documents_fts_update AFTER UPDATE OF title, content ON documents BEGIN
    INSERT INTO documents_fts (documents_fts, rowid, title, content) VALUES ('delete', old.seq, old.title, old.content);
    INSERT INTO documents_fts (rowid, title, content) VALUES (new.seq, new.title, new.content);
  END;
  `,
];
