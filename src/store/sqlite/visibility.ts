import type { ListBranch } from './page-limit.js';

/**
 * The SQL form of DESIGN §1: which rows a viewer may see. Every query that
 * returns user content is built from these fragments. Parameters: @uid (the
 * caller), @oid (the organization of the request's scope).
 */

const MEMBER = `EXISTS (SELECT 1 FROM memberships m WHERE m.org_id = @oid AND m.user_id = @uid)`;

/** Projects of @oid the caller created or that were shared with the caller. */
const ORG_PROJECT = (p: string) =>
  `(${p}.creator_id = @uid OR EXISTS (SELECT 1 FROM project_shares s WHERE s.project_id = ${p}.id AND s.user_id = @uid))`;

/** Personal projects of other users shared with the caller. */
const SHARED_PERSONAL_PROJECT_IDS = `SELECT s.project_id FROM project_shares s JOIN projects sp ON sp.id = s.project_id
  WHERE s.user_id = @uid AND sp.is_org = 0 AND sp.workspace_id <> @uid`;

export const projectVisible = {
  personal: (p: string) =>
    `(${p}.workspace_id = @uid OR (${p}.is_org = 0 AND EXISTS (SELECT 1 FROM project_shares s WHERE s.project_id = ${p}.id AND s.user_id = @uid)))`,
  org: (p: string) => `(${p}.workspace_id = @oid AND ${MEMBER} AND ${ORG_PROJECT(p)})`,
};

/**
 * Content in projects (documents, chats), as disjoint branches: a list query
 * merges them, each read along its own index (listPageSql). The projects a
 * viewer sees beyond its workspace's own content are bound as @projects, the
 * JSON array of the ids sharedProjectIds returns for the viewer
 * (viewer-scope.ts keeps it in the access cache): SQLite would otherwise
 * build the IN list anew for every page, about half of a page's cost.
 *
 * In the personal scope each shared project, up to MAX_PROJECT_BRANCHES, is
 * a branch of its own, read newest first along the project index, so that a
 * page reads no more of each than it takes (listPageSql); the projects past those are one more
 * branch, which sorts all their content. As one IN branch, two shared
 * projects' 169 documents were all read and sorted for every page (the
 * benchmark's callers with shared projects: 51-54 µs a page, 32-37 µs so).
 * `shared` is the number of those projects.
 */
export const MAX_PROJECT_BRANCHES = 16;

export const listBranches = {
  personal: (t: string, shared: number): ListBranch[] => [
    { where: `${t}.workspace_id = @uid`, ordered: true },
    ...Array.from({ length: Math.min(shared, MAX_PROJECT_BRANCHES) }, (_, i) => ({
      where: `${t}.project_id = json_extract(@projects, '$[${i}]')`,
      ordered: true,
    })),
    ...(shared > MAX_PROJECT_BRANCHES
      ? [{ where: `${t}.project_id IN (SELECT value FROM json_each(@projects) WHERE key >= ${MAX_PROJECT_BRANCHES})`, ordered: false }]
      : []),
  ],
  // A team's projects are all in one branch, shared or not, read along the
  // workspace index (which holds project_id).
  org: (t: string, _shared: number): ListBranch[] => [
    {
      where: `${t}.workspace_id = @oid AND ${MEMBER} AND (${t}.project_id IS NULL OR ${t}.project_id IN
      (SELECT value FROM json_each(@projects)))`,
      ordered: true,
    },
  ],
};

/** What tells apart the statements listBranches gives a scope with `shared` projects (a key of a statement cache). */
export function branchShape(kind: ScopeKind, shared: number): number {
  return kind === 'org' ? 0 : Math.min(shared, MAX_PROJECT_BRANCHES + 1);
}

/**
 * The same rule as listBranches, checked row by row: correlated EXISTS
 * look-ups instead of IN lists, which SQLite would build in full (every
 * shared or visible project of the scope) for each statement, even one that
 * reads a single document. The model test (test/visibility.test.ts) holds
 * the two forms to the same answers.
 */
export const contentVisible = {
  personal: (t: string) =>
    `(${t}.workspace_id = @uid OR (${t}.project_id IS NOT NULL AND EXISTS (SELECT 1 FROM project_shares s
      JOIN projects sp ON sp.id = s.project_id
      WHERE s.project_id = ${t}.project_id AND s.user_id = @uid AND sp.is_org = 0 AND sp.workspace_id <> @uid)))`,
  org: (t: string) =>
    `(${t}.workspace_id = @oid AND ${MEMBER} AND (${t}.project_id IS NULL OR EXISTS (SELECT 1 FROM projects op
      WHERE op.id = ${t}.project_id AND op.workspace_id = @oid AND ${ORG_PROJECT('op')})))`,
};

/**
 * Beyond the workspace's own content: the projects whose content the caller
 * sees in a scope, as a query of ids (for the org scope, membership is
 * checked apart).
 */
export const sharedProjectIds = {
  personal: SHARED_PERSONAL_PROJECT_IDS,
  org: `SELECT op.id FROM projects op WHERE op.workspace_id = @oid AND ${ORG_PROJECT('op')}`,
};

export const templateVisible = `((@sys = 1 AND t.workspace_id IS NULL)
  OR (t.workspace_id = coalesce(@oid, @uid) AND (@oid IS NULL OR ${MEMBER})))`;

export type ScopeKind = 'personal' | 'org';
