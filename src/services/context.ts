import type { Config } from '../config.js';
import type { Clock } from '../domain/time.js';
import type { Scope } from '../domain/keys.js';
import { InvalidRequest, NotFound } from '../errors.js';
import type { OrganizationRow, Store, Viewer } from '../store/store.js';

/** What every service needs, passed in (tests give a temporary store and a controllable clock). */
export interface ServiceDeps {
  config: Config;
  store: Store;
  clock: Clock;
}

/** The authenticated caller of a request: the key and the user it acts as. */
export interface Caller {
  keyId: string;
  keyName: string | null;
  scopes: Scope[];
  user: { id: string; name: string | null; email: string };
  /** The user's organizations (teams), by name then id, as of this request. */
  organizations: OrganizationRow[];
  /** The lookup key that grants API access (DESIGN §2). */
  plan: string;
}

/**
 * The workspace a request is scoped to. An organization the caller is not a
 * member of is inaccessible: on list endpoints that is a bad parameter (400),
 * on single documents indistinguishable from a missing one (404), DESIGN §3.
 */
export function resolveViewer(caller: Caller, organizationId: string | undefined, inaccessible: 'invalid' | 'not_found'): Viewer {
  if (organizationId === undefined) return { userId: caller.user.id, orgId: null };
  // Membership as read with the key for this request; every query the viewer
  // runs checks it again.
  if (caller.organizations.some((o) => o.id === organizationId)) return { userId: caller.user.id, orgId: organizationId };
  throw inaccessible === 'invalid'
    ? new InvalidRequest('organizationId: no organization with this id is accessible with this key.')
    : new NotFound('Not found: no organization with this id is accessible with this key.');
}

/** A `projectId` filter on a list endpoint must name a project visible in the request's scope. */
export async function requireVisibleProject(deps: ServiceDeps, viewer: Viewer, projectId: string): Promise<void> {
  if (!(await deps.store.isProjectVisible(viewer, projectId))) {
    throw new InvalidRequest('projectId: no project with this id is accessible in this workspace.');
  }
}

export const documentUrl = (config: Config, id: string) => `${config.publicAppUrl}/documents/${id}`;
export const chatUrl = (config: Config, id: string) => `${config.publicAppUrl}/chats/${id}`;
