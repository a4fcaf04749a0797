import type { Viewer } from '../store.js';
import type { AccessCache } from './access-cache.js';
import type { Db } from './database.js';
import { outsideProjectsToken, projectToken, workspaceToken } from './search.js';
import { sharedProjectIds, type ScopeKind } from './visibility.js';

export const kindOf = (v: Viewer): ScopeKind => (v.orgId === null ? 'personal' : 'org');
/**
 * A statement's parameters: the viewer's (@uid, @oid), and `more`. Not
 * `{ ...viewerParams(v), … }`: Node 20's V8 gives each object made by a
 * spread a map of its own, so every property added after the spread takes
 * its slow path and makes a new map, 0.5 µs each (a page's six parameters
 * took 2.4 µs that way, 65 ns through Object.assign; bench/README.md).
 */
export function viewerParams(v: Viewer): { uid: string; oid: string | null };
export function viewerParams<T extends object>(v: Viewer, more: T): { uid: string; oid: string | null } & T;
export function viewerParams(v: Viewer, more?: object) {
  return Object.assign({ uid: v.userId, oid: v.orgId }, more);
}

/**
 * What a viewer may see in its scope beyond its workspace's own content
 * (sharedProjectIds): the projects' ids as the JSON array that lists bind
 * (listBranches), how many there are, and the scope tokens of everything
 * visible, which searches match.
 */
export interface ViewerScope {
  projects: string;
  shared: number;
  tokens: string[];
  /**
   * Whether the scope held every document when it was read
   * (everythingInScope); false past MAX_SCOPE_TOKENS, where searches go
   * without tokens anyway. Documents are never moved or removed, and
   * projects and shares are written by operator commands, which drop the
   * cache: a scope that did not hold every document will not until then.
   * One that did is asked again before a search goes without its tokens.
   */
  heldEverything: boolean;
}

/**
 * A viewer's scope, or null for an organization the caller is not a member
 * of. Kept in the access cache: projects, shares and memberships are written
 * only by operator commands, which drop it. (Lists check membership again in
 * SQL, searches every row found.)
 */
export function viewerScopes(
  db: Db,
  cache: AccessCache,
  holdsEverything = everythingInScope(db),
): (viewer: Viewer) => ViewerScope | null {
  const memberStmt = db.prepare('SELECT 1 FROM memberships WHERE org_id = @oid AND user_id = @uid');
  const sharedProjects = {
    personal: db.prepare(sharedProjectIds.personal).pluck(),
    org: db.prepare(sharedProjectIds.org).pluck(),
  };
  return (viewer) =>
    cache.get(`scope:${viewer.userId}:${viewer.orgId ?? ''}`, () => {
      const p = viewerParams(viewer);
      if (viewer.orgId !== null && !memberStmt.get(p)) return null;
      const ids = sharedProjects[kindOf(viewer)].all(p) as string[];
      const own = viewer.orgId === null ? workspaceToken(viewer.userId) : outsideProjectsToken(viewer.orgId);
      return {
        projects: JSON.stringify(ids),
        shared: ids.length,
        tokens: [own, ...ids.map(projectToken)],
        // Past MAX_SCOPE_TOKENS a search goes without tokens anyway.
        heldEverything: ids.length < MAX_SCOPE_TOKENS && holdsEverything(viewer, ids.length),
      };
    });
}

/**
 * A search restricted to scope tokens reads only the caller's matches; past
 * this many tokens (the workspace's and one per project beyond it) the query
 * would grow too long, and the search reads all matches, keeping the
 * visible ones.
 */
export const MAX_SCOPE_TOKENS = 64;

/**
 * Whether a viewer's scope holds every document: none lies outside its
 * workspace and, in a team, the team has no project beyond the `seen` ones
 * the caller sees (sharedProjectIds; the scope is null for a non-member). A
 * search then matches without scope tokens, whose AND took up to half of a
 * single user's searches' SQL (bench/README.md); each row found is still
 * checked against the visibility rules. Two index seeks, and in a team at
 * most `seen` + 1 steps along its projects: asked only when the search
 * would otherwise use its tokens, so `seen` is under MAX_SCOPE_TOKENS.
 */
export function everythingInScope(db: Db): (viewer: Viewer, seen: number) => boolean {
  const outside = (w: string) =>
    `NOT EXISTS (SELECT 1 FROM documents WHERE workspace_id < ${w}) AND NOT EXISTS (SELECT 1 FROM documents WHERE workspace_id > ${w})`;
  const holds = {
    personal: db.prepare(`SELECT 1 WHERE ${outside('@uid')}`),
    org: db.prepare(
      `SELECT 1 WHERE ${outside('@oid')}
         AND NOT EXISTS (SELECT 1 FROM projects WHERE workspace_id = @oid LIMIT 1 OFFSET @seen)`,
    ),
  };
  return (viewer, seen) =>
    viewer.orgId === null
      ? holds.personal.get({ uid: viewer.userId }) !== undefined
      : holds.org.get({ oid: viewer.orgId, seen }) !== undefined;
}
