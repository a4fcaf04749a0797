import { foldTitle } from '../domain/search.js';
import { mapMaybe } from '../maybe-promise.js';
import type { ChatRow, Viewer } from '../store/store.js';
import { chatUrl, requireVisibleProject, resolveViewer, type Caller, type ServiceDeps } from './context.js';

/** What `GET /v1/me` answers. */
interface MeBody {
  id: string;
  name: string | null;
  email: string;
  plan: string;
  key: { name: string | null; scopes: Caller['scopes'] };
  organizations: { id: string; name: string }[];
}

/**
 * The caller, and the lists of projects, templates, organizations and
 * chats: answered at once when the store answers at once (as the document
 * reads are, src/maybe-promise.ts), the routes sending what they return.
 */
export function workspaceService(deps: ServiceDeps) {
  const { config, store } = deps;

  function chatsIn(viewer: Viewer, q: { q?: string; projectId?: string; limit: number }) {
    const rows = store.listChats(viewer, {
      titleContains: q.q === undefined ? undefined : foldTitle(q.q),
      projectId: q.projectId,
      limit: q.limit,
    });
    return mapMaybe(rows, (found: ChatRow[]) => {
      // Not `{ ...c, url }`: Node 20's V8 takes 0.7 µs for such an object (viewer-scope.ts's viewerParams).
      const chats = found.map((c) => Object.assign(c, { url: chatUrl(config, c.id) }));
      return { chats, count: chats.length };
    });
  }

  return {
    /**
     * Answered from the caller alone, without waiting. The route keeps each
     * caller's answer as it serialized it (src/api/me/routes.ts), so this is
     * asked once for each caller (the guard makes a caller once for each
     * principal the store reads).
     */
    me(caller: Caller): MeBody {
      return {
        id: caller.user.id,
        name: caller.user.name,
        email: caller.user.email,
        plan: caller.plan,
        key: { name: caller.keyName, scopes: caller.scopes },
        organizations: caller.organizations.map((o) => ({ id: o.id, name: o.name })),
      };
    },

    organizations(caller: Caller) {
      const { organizations } = caller;
      return { organizations, count: organizations.length };
    },

    projects(caller: Caller, q: { organizationId?: string; limit: number }) {
      const viewer = resolveViewer(caller, q.organizationId, 'invalid');
      return mapMaybe(store.listProjects(viewer, q.limit), (projects) => ({ projects, count: projects.length }));
    },

    templates(caller: Caller, q: { organizationId?: string; includeSystem: 'true' | 'false'; limit: number }) {
      const viewer = resolveViewer(caller, q.organizationId, 'invalid');
      return mapMaybe(store.listTemplates(viewer, q.includeSystem === 'true', q.limit), (templates) => ({ templates, count: templates.length }));
    },

    chats(caller: Caller, q: { q?: string; organizationId?: string; projectId?: string; limit: number }) {
      const viewer = resolveViewer(caller, q.organizationId, 'invalid');
      if (q.projectId === undefined) return chatsIn(viewer, q);
      return requireVisibleProject(deps, viewer, q.projectId).then(() => chatsIn(viewer, q));
    },
  };
}

