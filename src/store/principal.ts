import type { Principal } from './store.js';

/**
 * A row of the key look-up both stores make in one statement: the unrevoked
 * key and its user, and one of the user's organizations (nulls where the
 * user has none), in the order the user joined them. `canWrite` is a flag as
 * the database reads it: 0 or 1 from SQLite, a boolean from PostgreSQL.
 */
export interface PrincipalRow {
  keyId: string;
  keyName: string | null;
  canWrite: boolean | number;
  lastUsedAt: string | null;
  userId: string;
  userName: string | null;
  email: string;
  plan: string | null;
  orgId: string | null;
  orgName: string;
  orgCreatedAt: string;
  orgPlan: string | null;
}

/**
 * The principal the rows of a key look-up stand for (null for no rows: no
 * such key, or revoked), its organizations put in DESIGN §3's order by
 * `byName`; `orgPlans` stay in the order the user joined them (Me.plan).
 */
export function principalOf<R extends PrincipalRow>(rows: R[], byName: (a: R, b: R) => number): Principal | null {
  const [r] = rows;
  if (r === undefined) return null;
  const memberships = rows.filter((m) => m.orgId !== null);
  return {
    keyId: r.keyId,
    keyName: r.keyName,
    canWrite: r.canWrite === true || r.canWrite === 1,
    lastUsedAt: r.lastUsedAt,
    user: { id: r.userId, name: r.userName, email: r.email, plan: r.plan },
    orgPlans: memberships.map((m) => m.orgPlan),
    organizations: [...memberships].sort(byName).map((m) => ({ id: m.orgId!, name: m.orgName, createdAt: m.orgCreatedAt })),
  };
}
