import type { ChatRow, ListChatsQuery, Principal, ProjectRow, TemplateRow, Viewer } from '../store.js';
import { principalOf, type PrincipalRow } from '../principal.js';
import { chatRow, type ChatColumns } from '../rows.js';
import type { Db } from './database.js';
import { contentVisible, projectVisible, templateVisible, viewerParams as params } from './visibility.js';
import type { StoreWrites } from './writes.js';

/**
 * Organizations are listed by name (DESIGN §3) as people sort names: by the
 * root locale's collation, so that "alpha" comes before "Beta", "Émile"
 * before "Zeta" and "Team 2" before "Team 10", whatever the machine's
 * locale; names that collate equal, then by id.
 */
const ORG_NAMES = new Intl.Collator('und', { numeric: true });
const byName = (a: PrincipalRow, b: PrincipalRow) => ORG_NAMES.compare(a.orgName, b.orgName) || (a.orgId! < b.orgId! ? -1 : a.orgId! > b.orgId! ? 1 : 0);

const asBoolean = (value: unknown) => value === 1;

/** Keys, organizations, projects, templates and chats, as the API reads them. */
export function workspaceQueries(db: Db, writes: StoreWrites) {
  // The key, its user and the user's organizations in one statement, so one
  // state of them: a row per organization in the order the user joined them
  // (a row of nulls without any).
  const principalStmt = db.prepare(
    `SELECT k.id AS keyId, k.name AS keyName, k.can_write AS canWrite, k.last_used_at AS lastUsedAt,
            u.id AS userId, u.name AS userName, u.email, u.plan,
            o.id AS orgId, o.name AS orgName, o.created_at AS orgCreatedAt, o.plan AS orgPlan
     FROM api_keys k JOIN users u ON u.id = k.user_id
     LEFT JOIN memberships m ON m.user_id = u.id LEFT JOIN organizations o ON o.id = m.org_id
     WHERE k.hash = ? AND k.revoked_at IS NULL
     ORDER BY m.joined_at, m.joined_seq`,
  );
  const touchStmt = db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?');
  const memberStmt = db.prepare('SELECT 1 FROM memberships WHERE org_id = ? AND user_id = ?');
  const projectVisibleStmt = db.prepare(`SELECT 1 FROM projects p WHERE p.id = @pid AND ${projectVisible('p')}`);
  const chatVisibleStmt = db.prepare(`SELECT 1 FROM chats c WHERE c.id = @id AND ${contentVisible('c')} AND (@anywhere OR c.project_id IS @pid)`);
  const projectsStmt = db.prepare(
    `SELECT p.id, p.name, p.description, p.created_at AS createdAt, p.creator_id <> @uid AS isSharedWithYou
     FROM projects p WHERE ${projectVisible('p')}
     ORDER BY p.created_at DESC, p.id DESC LIMIT @limit`,
  );
  const templatesStmt = db.prepare(
    `SELECT t.id, t.title, t.description, t.workspace_id IS NULL AS isSystem, t.is_default AS isDefault
     FROM templates t WHERE ${templateVisible('t')}
     ORDER BY t.workspace_id IS NULL DESC, t.created_at DESC, t.id DESC LIMIT @limit`,
  );
  const chatsStmt = db.prepare(
    `SELECT c.id, c.title, c.created_at AS createdAt, c.updated_at AS updatedAt, c.message_count AS messageCount,
            c.project_id AS projectId, p.name AS projectName
     FROM chats c LEFT JOIN projects p ON p.id = c.project_id
     WHERE ${contentVisible('c')} AND (@pid IS NULL OR c.project_id = @pid) AND (@title IS NULL OR instr(c.title_folded, @title) > 0)
     ORDER BY c.sort_at DESC, c.id DESC LIMIT @limit`,
  );

  return {
    async findPrincipal(keyHash: string): Promise<Principal | null> {
      return principalOf(principalStmt.all(Buffer.from(keyHash, 'base64')) as PrincipalRow[], byName);
    },

    async touchKey(keyId: string, at: string): Promise<void> {
      await writes.write(() => touchStmt.run(at, keyId));
    },

    async isMember(orgId: string, userId: string): Promise<boolean> {
      return memberStmt.get(orgId, userId) !== undefined;
    },

    async isProjectVisible(viewer: Viewer, projectId: string): Promise<boolean> {
      return projectVisibleStmt.get(params(viewer, { pid: projectId })) !== undefined;
    },

    async isChatVisible(viewer: Viewer, chatId: string, projectId?: string | null): Promise<boolean> {
      return chatVisibleStmt.get(params(viewer, { id: chatId, anywhere: projectId === undefined ? 1 : 0, pid: projectId ?? null })) !== undefined;
    },

    async listProjects(viewer: Viewer, limit: number): Promise<ProjectRow[]> {
      const rows = projectsStmt.all(params(viewer, { limit })) as (Omit<ProjectRow, 'isSharedWithYou'> & { isSharedWithYou: number })[];
      return rows.map((r) => ({ id: r.id, name: r.name, description: r.description, createdAt: r.createdAt, isSharedWithYou: asBoolean(r.isSharedWithYou) }));
    },

    async listTemplates(viewer: Viewer, includeSystem: boolean, limit: number): Promise<TemplateRow[]> {
      const rows = templatesStmt.all(params(viewer, { sys: includeSystem ? 1 : 0, limit })) as (Omit<TemplateRow, 'isSystem' | 'isDefault'> & {
        isSystem: number;
        isDefault: number;
      })[];
      return rows.map((r) => ({ id: r.id, title: r.title, description: r.description, isSystem: asBoolean(r.isSystem), isDefault: asBoolean(r.isDefault) }));
    },

    async listChats(viewer: Viewer, query: ListChatsQuery): Promise<ChatRow[]> {
      const rows = chatsStmt.all(
        params(viewer, { pid: query.projectId ?? null, title: query.titleContains ?? null, limit: query.limit }),
      ) as ChatColumns[];
      return rows.map(chatRow);
    },
  };
}
