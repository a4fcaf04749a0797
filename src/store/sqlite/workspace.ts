import type {
  ChatRow,
  ListChatsQuery,
  Principal,
  ProjectRow,
  TemplateRow,
  Viewer,
} from '../store.js';
import type { AccessCache } from './access-cache.js';
import { NO_SNAPSHOT, type ReadSnapshot } from './read-snapshot.js';
import { onlyBusy, withoutWaiting, type Db } from './database.js';
import { branchShape, contentVisible, listBranches, projectVisible, templateVisible, type ScopeKind } from './visibility.js';
import { kindOf, viewerParams as params, viewerScopes } from './viewer-scope.js';
import { listPageSql, PAGE_LIMIT } from './page-limit.js';

/**
 * Organizations are listed by name (DESIGN §3) as people sort names: by the
 * root locale's collation, so that "alpha" comes before "Beta", "Émile"
 * before "Zeta" and "Team 2" before "Team 10", whatever the machine's
 * locale; names that collate equal, then by id.
 */
const ORG_NAMES = new Intl.Collator('und', { numeric: true });
const byName = (a: { id: string; name: string }, b: { id: string; name: string }) =>
  ORG_NAMES.compare(a.name, b.name) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** A principal's entry in the access cache. */
const principalKey = (keyHash: string) => `principal:${keyHash}`;

/** Keys, organizations, projects, templates and chats, as the API reads them. */
export function workspaceQueries(db: Db, cache: AccessCache, snapshot: ReadSnapshot = NO_SNAPSHOT) {
  const principalStmt = db.prepare(
    `SELECT k.id AS key_id, k.name AS key_name, k.can_write, k.last_used_at,
            u.id AS user_id, u.name AS user_name, u.email, u.plan,
            (SELECT json_group_array(plan) FROM (
               SELECT o.plan FROM memberships m JOIN organizations o ON o.id = m.org_id
               WHERE m.user_id = u.id ORDER BY m.joined_at, m.joined_seq)) AS org_plans
     FROM api_keys k JOIN users u ON u.id = k.user_id
     WHERE k.hash = ? AND k.revoked_at IS NULL`,
  );
  const touchStmt = db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?');
  // A key's last use is written without waiting for another process's write lock.
  const noWait = withoutWaiting(db);
  const orgsStmt = db.prepare(
    `SELECT o.id, o.name, o.created_at FROM memberships m JOIN organizations o ON o.id = m.org_id
     WHERE m.user_id = ?`,
  );
  const memberStmt = db.prepare('SELECT 1 FROM memberships WHERE org_id = ? AND user_id = ?');
  const projectVisibleStmt = {
    personal: db.prepare(`SELECT 1 FROM projects p WHERE p.id = @pid AND ${projectVisible.personal('p')}`),
    org: db.prepare(`SELECT 1 FROM projects p WHERE p.id = @pid AND ${projectVisible.org('p')}`),
  };
  const chatVisibleStmt = {
    personal: db.prepare(`SELECT 1 FROM chats c WHERE c.id = @id AND ${contentVisible.personal('c')}`),
    org: db.prepare(`SELECT 1 FROM chats c WHERE c.id = @id AND ${contentVisible.org('c')}`),
  };
  const projectsStmt = {
    personal: db.prepare(
      `SELECT p.id, p.name, p.description, p.created_at, p.workspace_id <> @uid AS shared
       FROM projects p WHERE ${projectVisible.personal('p')}
       ORDER BY p.created_at DESC, p.id DESC ${PAGE_LIMIT}`,
    ),
    org: db.prepare(
      `SELECT p.id, p.name, p.description, p.created_at, p.creator_id <> @uid AS shared
       FROM projects p WHERE ${projectVisible.org('p')}
       ORDER BY p.created_at DESC, p.id DESC ${PAGE_LIMIT}`,
    ),
  };
  const templatesStmt = db.prepare(
    `SELECT t.id, t.title, t.description, t.workspace_id IS NULL AS is_system, t.is_default
     FROM templates t WHERE ${templateVisible}
     ORDER BY t.workspace_id IS NULL DESC, t.created_at DESC, t.id DESC ${PAGE_LIMIT}`,
  );

  const scopeOf = viewerScopes(db, cache);
  const chatCache = new Map<string, ReturnType<Db['prepare']>>();
  function chatStatement(kind: ScopeKind, title: boolean, project: boolean, shared: number) {
    const key = `${kind}:${title}:${project}:${branchShape(kind, shared)}`;
    let stmt = chatCache.get(key);
    if (!stmt) {
      stmt = db.prepare(chatPageSql(kind, title, project, shared));
      chatCache.set(key, stmt);
    }
    return stmt;
  }

  // Key, user and organizations in one read transaction: one state of them.
  const loadPrincipal = db.transaction((keyHash: Buffer): Principal | null => {
    const r = principalStmt.get(keyHash) as
      | {
          key_id: string;
          key_name: string | null;
          can_write: number;
          last_used_at: string | null;
          user_id: string;
          user_name: string | null;
          email: string;
          plan: string | null;
          org_plans: string;
        }
      | undefined;
    if (!r) return null;
    return {
      keyId: r.key_id,
      keyName: r.key_name,
      canWrite: r.can_write === 1,
      lastUsedAt: r.last_used_at,
      user: { id: r.user_id, name: r.user_name, email: r.email, plan: r.plan },
      orgPlans: JSON.parse(r.org_plans) as (string | null)[],
      organizations: (orgsStmt.all(r.user_id) as { id: string; name: string; created_at: string }[])
        .map((o) => ({ id: o.id, name: o.name, createdAt: o.created_at }))
        .sort(byName),
    };
  });

  return {
    knownPrincipal(keyHash: string): Principal | undefined {
      return cache.peek<Principal>(principalKey(keyHash));
    },

    async findPrincipal(keyHash: string, worthLooking: () => boolean = () => true): Promise<Principal | null> {
      const key = principalKey(keyHash);
      const known = cache.peek<Principal>(key);
      if (known !== undefined) return known;
      // Not worth it: not looked up.
      if (!worthLooking()) return null;
      const hash = Buffer.from(keyHash, 'base64');
      const principal = snapshot.within(() => loadPrincipal(hash));
      // Only keys that exist are kept: anyone can make well-formed keys, and
      // remembering each unknown one would let them crowd out the cache.
      return principal === null ? null : cache.keep(key, principal);
    },

    async touchKey(keyId: string, at: string): Promise<boolean> {
      // Nothing cached depends on it: the guard remembers its own writes
      // (src/http/auth.ts), and the cached principals stay.
      snapshot.release();
      try {
        noWait(() => touchStmt.run(at, keyId));
        return true;
      } catch (error) {
        if (onlyBusy((error as { code?: unknown }).code)) return false;
        throw error;
      }
    },

    async isMember(orgId: string, userId: string): Promise<boolean> {
      return memberStmt.get(orgId, userId) !== undefined;
    },

    async isProjectVisible(viewer: Viewer, projectId: string): Promise<boolean> {
      return projectVisibleStmt[kindOf(viewer)].get(params(viewer, { pid: projectId })) !== undefined;
    },

    async isChatVisible(viewer: Viewer, chatId: string): Promise<boolean> {
      return chatVisibleStmt[kindOf(viewer)].get(params(viewer, { id: chatId })) !== undefined;
    },

    listProjects(viewer: Viewer, limit: number): ProjectRow[] {
      const rows = projectsStmt[kindOf(viewer)].all(params(viewer, { limit })) as {
        id: string;
        name: string;
        description: string | null;
        created_at: string;
        shared: number;
      }[];
      return rows.map((r) => ({
        id: r.id,
        name: r.name,
        description: r.description,
        createdAt: r.created_at,
        isSharedWithYou: r.shared === 1,
      }));
    },

    listTemplates(viewer: Viewer, includeSystem: boolean, limit: number): TemplateRow[] {
      const rows = templatesStmt.all(params(viewer, { sys: includeSystem ? 1 : 0, limit })) as {
        id: number;
        title: string;
        description: string | null;
        is_system: number;
        is_default: number;
      }[];
      return rows.map((r) => ({
        id: r.id,
        title: r.title,
        description: r.description,
        isSystem: r.is_system === 1,
        isDefault: r.is_default === 1,
      }));
    },

    listChats(viewer: Viewer, query: ListChatsQuery): ChatRow[] {
      const scope = scopeOf(viewer);
      if (scope === null) return [];
      const stmt = chatStatement(kindOf(viewer), query.titleContains !== undefined, query.projectId !== undefined, scope.shared);
      const rows = stmt.all(
        params(viewer, {
          projects: scope.projects,
          pid: query.projectId ?? null,
          title: query.titleContains ?? null,
          limit: query.limit,
        }),
      ) as {
        id: string;
        title: string | null;
        created_at: string;
        updated_at: string | null;
        message_count: number;
        project_id: string | null;
        project_name: string | null;
      }[];
      return rows.map((r) => ({
        id: r.id,
        title: r.title,
        createdAt: r.created_at,
        updatedAt: r.updated_at,
        messageCount: r.message_count,
        project: r.project_id !== null ? { id: r.project_id, name: r.project_name ?? '' } : null,
      }));
    },
  };
}

/**
 * A page of chats in a scope with `shared` projects beyond its workspace
 * (listBranches): those whose title holds @title (`title`), of one project
 * (`project`, bound as @pid) or of all.
 */
export function chatPageSql(kind: ScopeKind, title: boolean, project: boolean, shared: number): string {
  return listPageSql({
    table: 'chats',
    t: 'c',
    key: 'rowid',
    branches: listBranches[kind]('c', shared),
    and: (project ? ' AND c.project_id = @pid' : '') + (title ? ' AND instr(c.title_folded, @title) > 0' : ''),
    select: 'c.id, c.title, c.created_at, c.updated_at, c.message_count, c.project_id, p.name AS project_name',
    join: 'LEFT JOIN projects p ON p.id = c.project_id',
  });
}
