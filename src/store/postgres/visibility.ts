import type { Viewer } from '../store.js';

/**
 * DESIGN §1 in PostgreSQL's SQL: the rules of src/domain/visibility.ts, as
 * src/store/sqlite/visibility.ts states them for SQLite, which every query
 * that returns or changes user content uses. Parameters: $1, the caller;
 * $2, the organization of the request's scope, or null for the personal
 * scope (viewerParams). test/store-contract/ holds them to the domain's
 * predicates.
 */

/** The scope is the personal one, or a team's that the caller belongs to now (scopeOpen). */
const SCOPE_OPEN = `($2::text IS NULL OR EXISTS (SELECT 1 FROM memberships m WHERE m.org_id = $2::text AND m.user_id = $1))`;

/**
 * The projects the caller created or that were shared with them, in any
 * workspace: a union of two index reads, which PostgreSQL can start a join
 * from (an OR of the two would read every project).
 */
const PROJECTS_OF_CALLER = `SELECT pc.id FROM projects pc WHERE pc.creator_id = $1
  UNION ALL SELECT ps.project_id FROM project_shares ps WHERE ps.user_id = $1`;

/**
 * canSeeProject, of the projects row `p`: its creator or a sharee, and in
 * the personal scope a personal project, in a team's a project of that team.
 */
export const projectVisible = (p: string) => `(${p}.id IN (${PROJECTS_OF_CALLER})
  AND CASE WHEN $2::text IS NULL THEN NOT ${p}.is_org ELSE ${p}.is_org AND ${p}.workspace_id = $2::text AND ${SCOPE_OPEN} END)`;

/** The ids of the projects the viewer sees in the scope. */
export const VISIBLE_PROJECT_IDS = `SELECT vp.id FROM projects vp WHERE ${projectVisible('vp')}`;

/**
 * The first half of canSeeContent, of the documents or chats row `t`:
 * outside projects, the scope's own workspace, if the scope is open.
 */
export const outsideProjectsVisible = (t: string) =>
  `(${t}.project_id IS NULL AND ${t}.workspace_id = coalesce($2::text, $1) AND ${SCOPE_OPEN})`;

/** canSeeContent, of the documents or chats row `t`: outside projects as above; in a project, the project's rule. */
export const contentVisible = (t: string) => `(${outsideProjectsVisible(t)} OR ${t}.project_id IN (${VISIBLE_PROJECT_IDS}))`;

/**
 * Where the viewer's content may be, a row per place in the column `word`,
 * as `words` writes each: in the personal scope the user's whole workspace
 * and each project of another's that the user sees; in a team's, the
 * team's content outside projects and each project the viewer sees there.
 * No row when the scope is not open. A place may hold more than the viewer
 * sees: places only narrow a read, which the visibility rule still checks.
 */
export const visiblePlaces = (words: { workspace: (id: string) => string; outside: (id: string) => string; project: (id: string) => string }) =>
  `SELECT CASE WHEN $2::text IS NULL THEN ${words.workspace('$1')} ELSE ${words.outside('$2::text')} END AS word WHERE ${SCOPE_OPEN}
    UNION ALL SELECT ${words.project('vp.id')} FROM projects vp WHERE ${projectVisible('vp')} AND ($2::text IS NOT NULL OR vp.workspace_id <> $1)`;

/**
 * workspaceForNewContent: the workspace a document created in the scope
 * goes to (in project $3 if not null), or null when it cannot be created there.
 */
export const NEW_CONTENT_WORKSPACE = `SELECT CASE WHEN $3::text IS NULL
    THEN (SELECT coalesce($2::text, $1) WHERE ${SCOPE_OPEN})
    ELSE (SELECT p.workspace_id FROM projects p WHERE p.id = $3::text AND ${projectVisible('p')}) END`;

/** canSeeTemplate, of the templates row `t`; $3 is true to include system templates. */
export const templateVisible = (t: string) => `((${t}.workspace_id IS NULL AND $3::boolean)
  OR (${t}.workspace_id = coalesce($2::text, $1) AND ${SCOPE_OPEN}))`;

/** A statement's parameters: the viewer's ($1, $2), then `more` from $3 on. */
export function viewerParams(viewer: Viewer, ...more: unknown[]): unknown[] {
  return [viewer.userId, viewer.orgId, ...more];
}

/**
 * Whether a value names nothing PostgreSQL could have stored: its text
 * cannot hold U+0000, and refuses such a parameter outright. A query
 * string may carry one (`projectId=%00`, `q=a%00`), where SQLite finds
 * nothing; the queries answer so here too, without asking PostgreSQL.
 */
export const namesNothing = (value: string | null | undefined): boolean => value != null && value.includes('\u0000');
