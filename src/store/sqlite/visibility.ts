import type { Viewer } from '../store.js';

/**
 * DESIGN §1 in SQL: the same rules as src/domain/visibility.ts, one form
 * each, which every query that returns user content uses (lists, searches
 * and single reads alike). Parameters: @uid, the caller; @oid, the
 * organization of the request's scope, or null for the personal scope.
 * test/visibility.test.ts holds these to the domain's predicates.
 */

/** The scope is the personal one, or a team's that the caller belongs to now (scopeOpen). */
const SCOPE_OPEN = `(@oid IS NULL OR EXISTS (SELECT 1 FROM memberships m WHERE m.org_id = @oid AND m.user_id = @uid))`;

/**
 * canSeeProject, of the projects row `p`: its creator or a sharee, and in
 * the personal scope a personal project, in a team's a project of that
 * team. Written so that SQLite reads it from the indexes on creator and
 * shares (an OR of indexed terms) rather than every project.
 */
export const projectVisible = (p: string) => `((${p}.creator_id = @uid OR ${p}.id IN (SELECT s.project_id FROM project_shares s WHERE s.user_id = @uid))
  AND CASE WHEN @oid IS NULL THEN ${p}.is_org = 0 ELSE ${p}.is_org = 1 AND ${p}.workspace_id = @oid AND ${SCOPE_OPEN} END)`;

/** The ids of the projects the viewer sees in the scope. */
export const VISIBLE_PROJECT_IDS = `SELECT vp.id FROM projects vp WHERE ${projectVisible('vp')}`;

/**
 * canSeeContent, of the documents or chats row `t`: outside projects, the
 * scope's own workspace if the scope is open; in a project, the project's
 * rule. Both terms are indexed (workspace, project), so that a list can
 * read just the viewer's rows.
 */
export const contentVisible = (t: string) => `((${t}.project_id IS NULL AND ${t}.workspace_id = coalesce(@oid, @uid) AND ${SCOPE_OPEN})
  OR ${t}.project_id IN (${VISIBLE_PROJECT_IDS}))`;

/**
 * workspaceForNewContent: the workspace a document created in the scope
 * goes to (in project @pid if not null), or NULL when it cannot be created
 * there.
 */
export const NEW_CONTENT_WORKSPACE = `SELECT CASE WHEN @pid IS NULL
    THEN (SELECT coalesce(@oid, @uid) WHERE ${SCOPE_OPEN})
    ELSE (SELECT p.workspace_id FROM projects p WHERE p.id = @pid AND ${projectVisible('p')}) END`;

/** canSeeTemplate, of the templates row `t`; @sys is 1 to include system templates. */
export const templateVisible = (t: string) => `((${t}.workspace_id IS NULL AND @sys = 1)
  OR (${t}.workspace_id = coalesce(@oid, @uid) AND ${SCOPE_OPEN}))`;

/** A statement's viewer parameters (@uid, @oid) with `more`. */
export function viewerParams<T extends object>(viewer: Viewer, more: T): { uid: string; oid: string | null } & T {
  return { uid: viewer.userId, oid: viewer.orgId, ...more };
}
