import type { ChatRow, ListChatsQuery, Principal, ProjectRow, TemplateRow, Viewer } from '../store.js';
import { principalOf, type PrincipalRow } from '../principal.js';
import { chatRow, type ChatColumns } from '../rows.js';
import type { Session } from './database.js';
import { contentVisible, namesNothing, outsideProjectsVisible, projectVisible, templateVisible, VISIBLE_PROJECT_IDS, viewerParams as params } from './visibility.js';

/**
 * The key, its user and the user's organizations in one statement, so one
 * state of them: a row per organization in the order the user joined them
 * (a row of nulls without any), each with its place by name, as people sort
 * names (the folio_names collation, then id: DESIGN §3).
 */
const PRINCIPAL = `SELECT k.id AS "keyId", k.name AS "keyName", k.can_write AS "canWrite", k.last_used_at AS "lastUsedAt",
    u.id AS "userId", u.name AS "userName", u.email, u.plan,
    o.id AS "orgId", o.name AS "orgName", o.created_at AS "orgCreatedAt", o.plan AS "orgPlan",
    row_number() OVER (ORDER BY o.name COLLATE folio_names, o.id) AS "byName"
  FROM api_keys k JOIN users u ON u.id = k.user_id
  LEFT JOIN memberships m ON m.user_id = u.id LEFT JOIN organizations o ON o.id = m.org_id
  WHERE k.hash = $1 AND k.revoked_at IS NULL
  ORDER BY m.joined_at, m.joined_seq`;

/** A row of PRINCIPAL: with its organization's place by name. */
type PrincipalByName = PrincipalRow & { byName: string };

const PROJECTS = `SELECT p.id, p.name, p.description, p.created_at AS "createdAt", p.creator_id <> $1 AS "isSharedWithYou"
  FROM projects p WHERE ${projectVisible('p')}
  ORDER BY p.created_at DESC, p.id DESC LIMIT $3`;

const TEMPLATES = `SELECT t.id, t.title, t.description, t.workspace_id IS NULL AS "isSystem", t.is_default AS "isDefault"
  FROM templates t WHERE ${templateVisible('t')}
  ORDER BY t.workspace_id IS NULL DESC, t.created_at DESC, t.id DESC LIMIT $4`;

/**
 * A page of chats, as LIST reads documents (documents.ts): outside
 * projects, then each visible project, each newest first from its own
 * index, merged; in one project ($3) only, if given. Titles are matched
 * with strpos, not LIKE: any text typed is text, `%` and `_` too.
 */
const CHAT_TITLE = '($4::text IS NULL OR strpos(c.title_folded, $4::text) > 0)';
const CHAT_ORDER = 'ORDER BY c.sort_at DESC, c.id DESC';
const CHATS = `SELECT c.id, c.title, c.created_at AS "createdAt", c.updated_at AS "updatedAt", c.message_count AS "messageCount",
    c.project_id AS "projectId", p.name AS "projectName"
  FROM (
    (SELECT c.* FROM chats c WHERE $3::text IS NULL AND ${outsideProjectsVisible('c')} AND ${CHAT_TITLE} ${CHAT_ORDER} LIMIT $5)
    UNION ALL
    (SELECT page.* FROM (${VISIBLE_PROJECT_IDS}) vp CROSS JOIN LATERAL
       (SELECT c.* FROM chats c WHERE c.project_id = vp.id AND ${CHAT_TITLE} ${CHAT_ORDER} LIMIT $5) page
     WHERE $3::text IS NULL OR vp.id = $3::text)
  ) c LEFT JOIN projects p ON p.id = c.project_id
  ${CHAT_ORDER} LIMIT $5`;

/** Keys, organizations, projects, templates and chats, as the API reads them. */
export function workspaceQueries(db: Session) {
  return {
    async findPrincipal(keyHash: string): Promise<Principal | null> {
      const { rows } = await db.query<PrincipalByName>(PRINCIPAL, [Buffer.from(keyHash, 'base64')]);
      return principalOf(rows, (a, b) => Number(a.byName) - Number(b.byName));
    },

    async touchKey(keyId: string, at: string): Promise<void> {
      await db.query('UPDATE api_keys SET last_used_at = $1 WHERE id = $2', [at, keyId]);
    },

    async isMember(orgId: string, userId: string): Promise<boolean> {
      if (namesNothing(orgId) || namesNothing(userId)) return false;
      return (await db.query('SELECT 1 FROM memberships WHERE org_id = $1 AND user_id = $2', [orgId, userId])).rowCount === 1;
    },

    async isProjectVisible(viewer: Viewer, projectId: string): Promise<boolean> {
      if (namesNothing(projectId)) return false;
      const { rowCount } = await db.query(`SELECT 1 FROM projects p WHERE p.id = $3 AND ${projectVisible('p')}`, params(viewer, projectId));
      return rowCount === 1;
    },

    async isChatVisible(viewer: Viewer, chatId: string, projectId?: string | null): Promise<boolean> {
      if (namesNothing(chatId) || namesNothing(projectId)) return false;
      const { rowCount } = await db.query(
        `SELECT 1 FROM chats c WHERE c.id = $3 AND ${contentVisible('c')} AND ($4 OR c.project_id IS NOT DISTINCT FROM $5)`,
        params(viewer, chatId, projectId === undefined, projectId ?? null),
      );
      return rowCount === 1;
    },

    async listProjects(viewer: Viewer, limit: number): Promise<ProjectRow[]> {
      return (await db.query<ProjectRow>(PROJECTS, params(viewer, limit))).rows;
    },

    async listTemplates(viewer: Viewer, includeSystem: boolean, limit: number): Promise<TemplateRow[]> {
      return (await db.query<TemplateRow>(TEMPLATES, params(viewer, includeSystem, limit))).rows;
    },

    async listChats(viewer: Viewer, query: ListChatsQuery): Promise<ChatRow[]> {
      if (namesNothing(query.projectId) || namesNothing(query.titleContains)) return [];
      const { rows } = await db.query<ChatColumns>(CHATS, params(viewer, query.projectId ?? null, query.titleContains ?? null, query.limit));
      return rows.map(chatRow);
    },
  };
}
