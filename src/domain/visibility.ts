/**
 * Who sees what (DESIGN §1), as plain predicates. The stores enforce the
 * same rules in their queries (src/store/sqlite/visibility.ts); the
 * model-based tests hold each store to these functions.
 *
 * A workspace is a user's personal one (its id is the user's) or a team's
 * (its id is the organization's). Content in a project always belongs to
 * the project's workspace.
 */

/** Who is asking and in which workspace: the personal one (orgId null) or a team's. */
export interface Viewer {
  userId: string;
  orgId: string | null;
}

/** What the rules read of a project. */
export interface ProjectFacts {
  workspaceId: string;
  /** True for a team's project, false for a personal one. */
  inTeam: boolean;
  creatorId: string;
  /** The users the project is shared with. */
  sharedWith: readonly string[];
}

/** What the rules read of a document or a chat: its workspace, and its project if it is in one. */
export interface ContentFacts {
  workspaceId: string;
  project: ProjectFacts | null;
}

/** Whether a user is a member of an organization now. */
export type Membership = (orgId: string, userId: string) => boolean;

/** A team's scope is open to its current members only; the personal scope always to its owner. */
export function scopeOpen(viewer: Viewer, isMember: Membership): boolean {
  return viewer.orgId === null || isMember(viewer.orgId, viewer.userId);
}

/**
 * In the personal scope: the user's own personal projects and the personal
 * projects others shared with them. In a team's scope: the team's projects
 * that the member created or that were shared with them.
 */
export function canSeeProject(viewer: Viewer, project: ProjectFacts, isMember: Membership): boolean {
  const creatorOrSharee = project.creatorId === viewer.userId || project.sharedWith.includes(viewer.userId);
  if (viewer.orgId === null) return !project.inTeam && creatorOrSharee;
  return project.inTeam && project.workspaceId === viewer.orgId && scopeOpen(viewer, isMember) && creatorOrSharee;
}

/** `isSharedWithYou`: a visible project that someone else created. */
export function isSharedWithViewer(viewer: Viewer, project: ProjectFacts): boolean {
  return project.creatorId !== viewer.userId;
}

/**
 * Documents and chats in a project follow the project. Outside projects
 * they are their workspace's: the owner's alone in the personal scope,
 * every current member's in a team's.
 */
export function canSeeContent(viewer: Viewer, item: ContentFacts, isMember: Membership): boolean {
  if (item.project !== null) return canSeeProject(viewer, item.project, isMember);
  if (viewer.orgId === null) return item.workspaceId === viewer.userId;
  return item.workspaceId === viewer.orgId && scopeOpen(viewer, isMember);
}

/**
 * System templates (workspace null) in every scope unless left out; a
 * user's own in the personal scope; a team's in its scope, to members.
 */
export function canSeeTemplate(
  viewer: Viewer,
  template: { workspaceId: string | null },
  includeSystem: boolean,
  isMember: Membership,
): boolean {
  if (template.workspaceId === null) return includeSystem;
  return template.workspaceId === (viewer.orgId ?? viewer.userId) && scopeOpen(viewer, isMember);
}

/**
 * The workspace a document created in this scope (and project) goes to, or
 * null when it cannot be created there: the project's, which must be
 * visible; otherwise the scope's own.
 */
export function workspaceForNewContent(viewer: Viewer, project: ProjectFacts | null, isMember: Membership): string | null {
  if (!scopeOpen(viewer, isMember)) return null;
  if (project !== null) return canSeeProject(viewer, project, isMember) ? project.workspaceId : null;
  return viewer.orgId ?? viewer.userId;
}
