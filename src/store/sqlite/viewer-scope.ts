import type { Viewer } from '../store.js';
import type { AccessCache } from './access-cache.js';
import type { Db } from './database.js';
import { outsideProjectsToken, projectToken, workspaceToken } from './search.js';
import { projectVisible, sharedProjectIds, type ScopeKind } from './visibility.js';

export const kindOf = (v: Viewer): ScopeKind => (v.orgId === null ? 'personal' : 'org');
export const viewerParams = (v: Viewer) => ({ uid: v.userId, oid: v.orgId });

/**
 * What a viewer may see in its scope beyond its workspace's own content
 * (sharedProjectIds): the projects' ids as the JSON array that lists bind
 * (listBranches), whether there are any, and the scope tokens of everything
 * visible, which searches match.
 */
export interface ViewerScope {
  projects: string;
  shared: boolean;
  tokens: string[];
  /**
   * Whether the scope held every document when it was read
   * (everythingInScope). Documents are never moved or removed, so a scope
   * that did not hold them all never will until the cache is dropped; one
   * that did is asked again before a search goes without its tokens.
   */
  heldEverything: boolean;
}

/**
 * A viewer's scope, or null for an organization the caller is not a member
 * of. Kept in the access cache: projects, shares and memberships are written
 * only by operator commands, which drop it. (Lists check membership again in
 * SQL, searches every row found.)
 */
export function viewerScopes(db: Db, cache: AccessCache): (viewer: Viewer) => ViewerScope | null {
  const memberStmt = db.prepare('SELECT 1 FROM memberships WHERE org_id = @oid AND user_id = @uid');
  const sharedProjects = {
    personal: db.prepare(sharedProjectIds.personal).pluck(),
    org: db.prepare(sharedProjectIds.org).pluck(),
  };
  const holdsEverything = everythingInScope(db);
  return (viewer) =>
    cache.get(`scope:${viewer.userId}:${viewer.orgId ?? ''}`, () => {
      const p = viewerParams(viewer);
      if (viewer.orgId !== null && !memberStmt.get(p)) return null;
      const ids = sharedProjects[kindOf(viewer)].all(p) as string[];
      const own = viewer.orgId === null ? workspaceToken(viewer.userId) : outsideProjectsToken(viewer.orgId);
      return {
        projects: JSON.stringify(ids),
        shared: ids.length > 0,
        tokens: [own, ...ids.map(projectToken)],
        heldEverything: holdsEverything(viewer),
      };
    });
}

/**
 * Whether a viewer's scope holds every document: none lies outside its
 * workspace and, in a team, the caller sees every project of it. A search
 * then matches without scope tokens, whose AND took up to half of a
 * single user's searches' SQL (bench/README.md); each row found is still
 * checked against the visibility rules. Two index seeks, and in a team a
 * look at each of its projects: about 3 µs.
 */
export function everythingInScope(db: Db): (viewer: Viewer) => boolean {
  const outside = (w: string) =>
    `NOT EXISTS (SELECT 1 FROM documents WHERE workspace_id < ${w}) AND NOT EXISTS (SELECT 1 FROM documents WHERE workspace_id > ${w})`;
  const holds = {
    personal: db.prepare(`SELECT 1 WHERE ${outside('@uid')}`),
    org: db.prepare(
      `SELECT 1 WHERE ${outside('@oid')}
         AND NOT EXISTS (SELECT 1 FROM projects op WHERE op.workspace_id = @oid AND NOT ${projectVisible.org('op')})`,
    ),
  };
  return (viewer) => holds[kindOf(viewer)].get(viewerParams(viewer)) !== undefined;
}
