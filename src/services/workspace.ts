import { foldTitle } from '../domain/search.js';
import { chatUrl, requireVisibleProject, resolveViewer, type Caller, type ServiceDeps } from './context.js';

/** The caller, and the lists of projects, templates, organizations and chats. */
export function workspaceService(deps: ServiceDeps) {
  const { config, store } = deps;

  return {
    me(caller: Caller) {
      return {
        id: caller.user.id,
        name: caller.user.name,
        email: caller.user.email,
        plan: caller.plan,
        key: { name: caller.keyName, scopes: caller.scopes },
        organizations: caller.organizations.map(({ id, name }) => ({ id, name })),
      };
    },

    organizations(caller: Caller) {
      const { organizations } = caller;
      return { organizations, count: organizations.length };
    },

    async projects(caller: Caller, q: { organizationId?: string; limit: number }) {
      const viewer = resolveViewer(caller, q.organizationId, 'invalid');
      const projects = await store.listProjects(viewer, q.limit);
      return { projects, count: projects.length };
    },

    async templates(caller: Caller, q: { organizationId?: string; includeSystem: 'true' | 'false'; limit: number }) {
      const viewer = resolveViewer(caller, q.organizationId, 'invalid');
      const templates = await store.listTemplates(viewer, q.includeSystem === 'true', q.limit);
      return { templates, count: templates.length };
    },

    async chats(caller: Caller, q: { q?: string; organizationId?: string; projectId?: string; limit: number }) {
      const viewer = resolveViewer(caller, q.organizationId, 'invalid');
      if (q.projectId !== undefined) await requireVisibleProject(deps, viewer, q.projectId);
      const found = await store.listChats(viewer, {
        titleContains: q.q === undefined ? undefined : foldTitle(q.q),
        projectId: q.projectId,
        limit: q.limit,
      });
      // Written out rather than spread, as documents' pages are (services/documents.ts).
      const chats = found.map(({ id, title, createdAt, updatedAt, messageCount, project }) => ({
        id,
        title,
        createdAt,
        updatedAt,
        messageCount,
        project,
        url: chatUrl(config, id),
      }));
      return { chats, count: chats.length };
    },
  };
}
