import { UsageError } from '../../errors.js';
import { newKeyId, newOrgId, newProjectId, newUserId, newUuid } from '../../domain/ids.js';
import { foldTitle } from '../../domain/search.js';
import type { KeyRecord, MemberRecord, NewChat, NewKey, NewProject, NewTemplate, OrgRecord, UserRecord } from '../store.js';
import { isUniqueViolation, type Session } from './database.js';

const KEY = `id, user_id AS "userId", name, can_write AS "canWrite", last4, created_at AS "createdAt",
  last_used_at AS "lastUsedAt", revoked_at AS "revokedAt"`;
const USER = 'id, email, name, plan, created_at AS "createdAt"';

/**
 * Templates of one workspace are made one at a time, so that of two
 * defaults made at once the later one is the default, as in SQLite: a
 * transaction-scoped advisory lock on the workspace (the templates_one_default
 * index would refuse the second instead). The first key names Folio's
 * template locks; the second, the workspace.
 */
const TEMPLATES_LOCK = 0x666f6c69; // "foli"

/** What the operator's command line writes: users, teams, plans, keys and content. */
export function adminQueries(db: Session) {
  const one = async <R>(text: string, values: unknown[]): Promise<R | null> =>
    (await db.query<R>(text, values)).rows[0] ?? null;

  return {
    async createUser(input: { email: string; name: string | null; plan: string | null; now: string }): Promise<UserRecord> {
      const id = newUserId();
      try {
        await db.query('INSERT INTO users (id, email, name, plan, created_at) VALUES ($1, $2, $3, $4, $5)', [id, input.email, input.name, input.plan, input.now]);
      } catch (err) {
        if (isUniqueViolation(err, 'users_email')) throw new UsageError(`a user with e-mail ${input.email} already exists`);
        throw err;
      }
      return { id, email: input.email, name: input.name, plan: input.plan, createdAt: input.now };
    },
    getUser: (id: string) => one<UserRecord>(`SELECT ${USER} FROM users WHERE id = $1`, [id]),
    findUserByEmail: (email: string) =>
      one<UserRecord>(`SELECT ${USER} FROM users WHERE folio_email_key(email) = folio_email_key($1)`, [email]),
    async setUserPlan(id: string, plan: string | null) {
      await db.query('UPDATE users SET plan = $1 WHERE id = $2', [plan, id]);
    },
    async createOrg(input: { name: string; plan: string | null; now: string }): Promise<OrgRecord> {
      const id = newOrgId();
      await db.query('INSERT INTO organizations (id, name, plan, created_at) VALUES ($1, $2, $3, $4)', [id, input.name, input.plan, input.now]);
      return { id, name: input.name, plan: input.plan, createdAt: input.now };
    },
    getOrg: (id: string) => one<OrgRecord>('SELECT id, name, plan, created_at AS "createdAt" FROM organizations WHERE id = $1', [id]),
    async setOrgPlan(id: string, plan: string | null) {
      await db.query('UPDATE organizations SET plan = $1 WHERE id = $2', [plan, id]);
    },
    async addMember(orgId: string, userId: string, now: string) {
      const { rowCount } = await db.query('INSERT INTO memberships (org_id, user_id, joined_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [orgId, userId, now]);
      return rowCount === 1;
    },
    async removeMember(orgId: string, userId: string) {
      return (await db.query('DELETE FROM memberships WHERE org_id = $1 AND user_id = $2', [orgId, userId])).rowCount === 1;
    },
    async listUsers() {
      return (await db.query<UserRecord>(`SELECT ${USER} FROM users ORDER BY created_at, id`)).rows;
    },
    async listOrgs() {
      return (await db.query<OrgRecord>('SELECT id, name, plan, created_at AS "createdAt" FROM organizations ORDER BY created_at, id')).rows;
    },
    async listMembers(orgId: string) {
      if ((await one('SELECT 1 FROM organizations WHERE id = $1', [orgId])) === null) return null;
      const { rows } = await db.query<MemberRecord>(
        `SELECT u.id, u.email, u.name, m.joined_at AS "joinedAt" FROM memberships m JOIN users u ON u.id = m.user_id
         WHERE m.org_id = $1 ORDER BY m.joined_at, m.joined_seq`,
        [orgId],
      );
      return rows;
    },
    async createKey(input: NewKey): Promise<KeyRecord> {
      const row = await one<KeyRecord>(
        `INSERT INTO api_keys (id, user_id, name, hash, last4, can_write, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${KEY}`,
        [newKeyId(), input.userId, input.name, Buffer.from(input.hash, 'base64'), input.last4, input.canWrite, input.now],
      );
      return row!;
    },
    async listKeys(userId: string): Promise<KeyRecord[]> {
      return (await db.query<KeyRecord>(`SELECT ${KEY} FROM api_keys WHERE user_id = $1 ORDER BY created_at, id`, [userId])).rows;
    },
    revokeKey: (keyId: string, now: string) =>
      one<KeyRecord>(`UPDATE api_keys SET revoked_at = coalesce(revoked_at, $2) WHERE id = $1 RETURNING ${KEY}`, [keyId, now]),
    async createProject(input: NewProject): Promise<{ id: string }> {
      const id = newProjectId();
      await db.query(
        'INSERT INTO projects (id, workspace_id, is_org, creator_id, name, description, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
        [id, input.orgId ?? input.creatorId, input.orgId !== null, input.creatorId, input.name, input.description, input.now],
      );
      return { id };
    },
    getProject: (id: string) =>
      one<{ id: string; name: string; workspaceId: string; creatorId: string }>(
        'SELECT id, name, workspace_id AS "workspaceId", creator_id AS "creatorId" FROM projects WHERE id = $1',
        [id],
      ),
    async shareProject(projectId: string, userId: string) {
      return (await db.query('INSERT INTO project_shares (project_id, user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING', [projectId, userId])).rowCount === 1;
    },
    createTemplate: (input: NewTemplate): Promise<{ id: number }> =>
      db.transaction(async (tx) => {
        if (input.isDefault) {
          await tx.query('SELECT pg_advisory_xact_lock($1, hashtext(coalesce($2::text, \'\')))', [TEMPLATES_LOCK, input.workspaceId]);
          await tx.query('UPDATE templates SET is_default = false WHERE workspace_id IS NOT DISTINCT FROM $1::text AND is_default', [input.workspaceId]);
        }
        const { rows } = await tx.query<{ id: number }>(
          'INSERT INTO templates (workspace_id, creator_id, title, description, is_default, created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id',
          [input.workspaceId, input.creatorId, input.title, input.description, input.isDefault, input.now],
        );
        return rows[0]!;
      }),
    async createChat(input: NewChat): Promise<{ id: string }> {
      const id = newUuid();
      await db.query(
        `INSERT INTO chats (id, workspace_id, creator_id, project_id, title, title_folded, message_count, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [id, input.workspaceId, input.creatorId, input.projectId, input.title, input.title === null ? null : foldTitle(input.title), input.messageCount, input.now],
      );
      return { id };
    },
  };
}
