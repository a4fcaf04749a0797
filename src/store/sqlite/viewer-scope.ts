import type { Viewer } from '../store.js';
import type { AccessCache } from './access-cache.js';
import type { Db } from './database.js';
import { outsideProjectsToken, projectToken, workspaceToken } from './search.js';
import { sharedProjectIds, type ScopeKind } from './visibility.js';

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
  return (viewer) =>
    cache.get(`scope:${viewer.userId}:${viewer.orgId ?? ''}`, () => {
      const p = viewerParams(viewer);
      if (viewer.orgId !== null && !memberStmt.get(p)) return null;
      const ids = sharedProjects[kindOf(viewer)].all(p) as string[];
      const own = viewer.orgId === null ? workspaceToken(viewer.userId) : outsideProjectsToken(viewer.orgId);
      return { projects: JSON.stringify(ids), shared: ids.length > 0, tokens: [own, ...ids.map(projectToken)] };
    });
}
