import { UsageError } from '../../errors.js';
import { newOrgId, newProjectId, newUserId, newUuid, newKeyId } from '../../domain/ids.js';
import { foldTitle } from '../../domain/search.js';
import type { KeyRecord, MemberRecord, OrgRecord, UserRecord } from '../store.js';
import { isUniqueViolation, type Db } from './database.js';

interface KeyDbRow {
  id: string;
  user_id: string;
  name: string | null;
  can_write: number;
  last4: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

const toKey = (r: KeyDbRow): KeyRecord => ({
  id: r.id,
  userId: r.user_id,
  name: r.name,
  canWrite: r.can_write === 1,
  last4: r.last4,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
  revokedAt: r.revoked_at,
});

const toUser = (r: { id: string; email: string; name: string | null; plan: string | null; created_at: string }): UserRecord => ({
  id: r.id,
  email: r.email,
  name: r.name,
  plan: r.plan,
  createdAt: r.created_at,
});

/** What the operator's command line writes: users, teams, plans, keys and content. */
export function adminQueries(db: Db) {
  const st = {
    insertUser: db.prepare('INSERT INTO users (id, email, name, plan, created_at) VALUES (@id, @email, @name, @plan, @now)'),
    getUser: db.prepare('SELECT * FROM users WHERE id = ?'),
    userByEmail: db.prepare('SELECT * FROM users WHERE email = ?'),
    setUserPlan: db.prepare('UPDATE users SET plan = ? WHERE id = ?'),
    insertOrg: db.prepare('INSERT INTO organizations (id, name, plan, created_at) VALUES (@id, @name, @plan, @now)'),
    getOrg: db.prepare('SELECT * FROM organizations WHERE id = ?'),
    setOrgPlan: db.prepare('UPDATE organizations SET plan = ? WHERE id = ?'),
    addMember: db.prepare(
      `INSERT OR IGNORE INTO memberships (org_id, user_id, joined_at, joined_seq)
       VALUES (@org, @user, @now, (SELECT coalesce(max(joined_seq), 0) + 1 FROM memberships))`,
    ),
    removeMember: db.prepare('DELETE FROM memberships WHERE org_id = ? AND user_id = ?'),
    listUsers: db.prepare('SELECT * FROM users ORDER BY created_at, id'),
    listOrgs: db.prepare('SELECT id, name, plan, created_at AS createdAt FROM organizations ORDER BY created_at, id'),
    listMembers: db.prepare(
      `SELECT u.id, u.email, u.name, m.joined_at AS joinedAt FROM memberships m JOIN users u ON u.id = m.user_id
       WHERE m.org_id = ? ORDER BY m.joined_at, m.joined_seq`,
    ),
    insertKey: db.prepare(
      `INSERT INTO api_keys (id, user_id, name, hash, last4, can_write, created_at)
       VALUES (@id, @userId, @name, @hash, @last4, @canWrite, @now) RETURNING *`,
    ),
    listKeys: db.prepare('SELECT * FROM api_keys WHERE user_id = ? ORDER BY created_at, id'),
    revokeKey: db.prepare(
      'UPDATE api_keys SET revoked_at = coalesce(revoked_at, @now) WHERE id = @id RETURNING *',
    ),
    insertProject: db.prepare(
      `INSERT INTO projects (id, workspace_id, is_org, creator_id, name, description, created_at)
       VALUES (@id, @workspace, @isOrg, @creator, @name, @description, @now)`,
    ),
    getProject: db.prepare('SELECT id, name, workspace_id, creator_id FROM projects WHERE id = ?'),
    share: db.prepare('INSERT OR IGNORE INTO project_shares (project_id, user_id) VALUES (?, ?)'),
    clearDefault: db.prepare('UPDATE templates SET is_default = 0 WHERE workspace_id IS @workspace'),
    insertTemplate: db.prepare(
      `INSERT INTO templates (workspace_id, creator_id, title, description, is_default, created_at)
       VALUES (@workspace, @creator, @title, @description, @isDefault, @now)`,
    ),
    insertChat: db.prepare(
      `INSERT INTO chats (id, workspace_id, creator_id, project_id, title, title_folded, message_count, created_at, sort_at)
       VALUES (@id, @workspace, @creator, @project, @title, @folded, @count, @now, @now)`,
    ),
  };

  const createTemplate = db.transaction(
    (input: { title: string; description: string | null; workspaceId: string | null; creatorId: string | null; isDefault: boolean; now: string }) => {
      if (input.isDefault) st.clearDefault.run({ workspace: input.workspaceId });
      const r = st.insertTemplate.run({
        workspace: input.workspaceId,
        creator: input.creatorId,
        title: input.title,
        description: input.description,
        isDefault: input.isDefault ? 1 : 0,
        now: input.now,
      });
      return { id: Number(r.lastInsertRowid) };
    },
  );

  return {
    async createUser(input: { email: string; name: string | null; plan: string | null; now: string }) {
      const id = newUserId();
      try {
        st.insertUser.run({ id, ...input });
      } catch (err) {
        if (isUniqueViolation(err)) throw new UsageError(`a user with e-mail ${input.email} already exists`);
        throw err;
      }
      return { id, email: input.email, name: input.name, plan: input.plan, createdAt: input.now };
    },
    async getUser(id: string) {
      const r = st.getUser.get(id) as Parameters<typeof toUser>[0] | undefined;
      return r ? toUser(r) : null;
    },
    async findUserByEmail(email: string) {
      const r = st.userByEmail.get(email) as Parameters<typeof toUser>[0] | undefined;
      return r ? toUser(r) : null;
    },
    async setUserPlan(id: string, plan: string | null) {
      st.setUserPlan.run(plan, id);
    },
    async createOrg(input: { name: string; plan: string | null; now: string }): Promise<OrgRecord> {
      const id = newOrgId();
      st.insertOrg.run({ id, ...input });
      return { id, name: input.name, plan: input.plan, createdAt: input.now };
    },
    async getOrg(id: string) {
      const r = st.getOrg.get(id) as { id: string; name: string; plan: string | null; created_at: string } | undefined;
      return r ? { id: r.id, name: r.name, plan: r.plan, createdAt: r.created_at } : null;
    },
    async setOrgPlan(id: string, plan: string | null) {
      st.setOrgPlan.run(plan, id);
    },
    async addMember(orgId: string, userId: string, now: string) {
      return st.addMember.run({ org: orgId, user: userId, now }).changes === 1;
    },
    async removeMember(orgId: string, userId: string) {
      return st.removeMember.run(orgId, userId).changes === 1;
    },
    async listUsers() {
      return (st.listUsers.all() as Parameters<typeof toUser>[0][]).map(toUser);
    },
    async listOrgs() {
      return st.listOrgs.all() as OrgRecord[];
    },
    async listMembers(orgId: string) {
      if (st.getOrg.get(orgId) === undefined) return null;
      return st.listMembers.all(orgId) as MemberRecord[];
    },
    async createKey(input: { userId: string; name: string | null; canWrite: boolean; hash: string; last4: string; now: string }) {
      const r = st.insertKey.get({
        id: newKeyId(),
        ...input,
        hash: Buffer.from(input.hash, 'base64'),
        canWrite: input.canWrite ? 1 : 0,
      }) as KeyDbRow;
      return toKey(r);
    },
    async listKeys(userId: string) {
      return (st.listKeys.all(userId) as KeyDbRow[]).map(toKey);
    },
    async revokeKey(keyId: string, now: string) {
      const r = st.revokeKey.get({ id: keyId, now }) as KeyDbRow | undefined;
      return r ? toKey(r) : null;
    },
    async createProject(input: { creatorId: string; orgId: string | null; name: string; description: string | null; now: string }) {
      const id = newProjectId();
      st.insertProject.run({
        id,
        workspace: input.orgId ?? input.creatorId,
        isOrg: input.orgId === null ? 0 : 1,
        creator: input.creatorId,
        name: input.name,
        description: input.description,
        now: input.now,
      });
      return { id };
    },
    async getProject(id: string) {
      const r = st.getProject.get(id) as { id: string; name: string; workspace_id: string; creator_id: string } | undefined;
      return r ? { id: r.id, name: r.name, workspaceId: r.workspace_id, creatorId: r.creator_id } : null;
    },
    async shareProject(projectId: string, userId: string) {
      return st.share.run(projectId, userId).changes === 1;
    },
    async createTemplate(input: { title: string; description: string | null; workspaceId: string | null; creatorId: string | null; isDefault: boolean; now: string }) {
      return createTemplate.immediate(input);
    },
    async createChat(input: { creatorId: string; workspaceId: string; projectId: string | null; title: string | null; messageCount: number; now: string }) {
      const id = newUuid();
      st.insertChat.run({
        id,
        workspace: input.workspaceId,
        creator: input.creatorId,
        project: input.projectId,
        title: input.title,
        folded: input.title === null ? null : foldTitle(input.title),
        count: input.messageCount,
        now: input.now,
      });
      return { id };
    },
  };
}
