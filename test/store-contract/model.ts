import { foldText, foldTitle } from '../../src/domain/search.js';
import {
  canSeeContent,
  canSeeProject,
  canSeeTemplate,
  isSharedWithViewer,
  type ContentFacts,
  type ProjectFacts,
  type Viewer,
} from '../../src/domain/visibility.js';

/**
 * What the suite wrote to a store, kept in plain memory, and what DESIGN §1
 * and §3 then say a viewer must see: the domain's visibility predicates and
 * the documented orders, applied to these facts. Every expectation of the
 * suite is read from here, never from the store.
 */

export interface ProjectModel extends ProjectFacts {
  id: string;
  name: string;
  description: string | null;
  createdAt: string;
  sharedWith: string[];
}

export interface ContentModel {
  id: string;
  workspaceId: string;
  projectId: string | null;
  createdAt: string;
  updatedAt: string | null;
}

export interface DocumentModel extends ContentModel {
  title: string;
  contentMarkdown: string;
  threadId: string | null;
}

/** One recorded state of a document (DESIGN §7), as the suite wrote it. */
export interface RevisionModel {
  number: number;
  createdAt: string;
  title: string;
  contentMarkdown: string;
  userId: string | null;
  keyName: string | null;
}

export interface ChatModel extends ContentModel {
  title: string | null;
  messageCount: number;
}

export interface TemplateModel {
  id: number;
  workspaceId: string | null;
  createdAt: string;
  isDefault: boolean;
}

const compareIds = (a: string | number, b: string | number) => (a < b ? -1 : a > b ? 1 : 0);

/** DESIGN §3: coalesce(updatedAt, createdAt) newest first, compared as instants, ties by id descending. */
const bySortTimeDesc = (a: ContentModel, b: ContentModel): number =>
  Date.parse(b.updatedAt ?? b.createdAt) - Date.parse(a.updatedAt ?? a.createdAt) || compareIds(b.id, a.id);

const byCreatedDesc = (a: { createdAt: string; id: string | number }, b: { createdAt: string; id: string | number }): number =>
  Date.parse(b.createdAt) - Date.parse(a.createdAt) || compareIds(b.id, a.id);

/** Templates: system ones first, then newest first, ties by id descending. */
const templateOrder = (a: TemplateModel, b: TemplateModel): number =>
  Number(b.workspaceId === null) - Number(a.workspaceId === null) || byCreatedDesc(a, b);

/** Organizations as people sort names (DESIGN §3), then by id. */
export const ORG_NAMES = new Intl.Collator('und', { numeric: true });

/**
 * DESIGN §3's search, stated plainly: every term is a prefix of some word of
 * the title or the content, case and accents aside.
 */
export function holdsTerms(doc: { title: string; contentMarkdown: string }, terms: readonly string[]): boolean {
  const words = foldText(`${doc.title}\n${doc.contentMarkdown}`).match(/[\p{L}\p{N}\p{M}\p{Co}]+/gu) ?? [];
  return terms.every((term) => words.some((word) => word.startsWith(foldText(term))));
}

export class Model {
  readonly projects = new Map<string, ProjectModel>();
  readonly documents = new Map<string, DocumentModel>();
  readonly chats = new Map<string, ChatModel>();
  readonly templates = new Map<number, TemplateModel>();
  /** The members of each organization now. */
  readonly members = new Map<string, Set<string>>();
  /** Each document's revisions, oldest first. */
  readonly revisions = new Map<string, RevisionModel[]>();

  readonly isMember = (orgId: string, userId: string): boolean => this.members.get(orgId)?.has(userId) ?? false;

  contentFacts(item: ContentModel): ContentFacts {
    return { workspaceId: item.workspaceId, project: item.projectId === null ? null : this.project(item.projectId) };
  }

  /** A creation or an update of `documentId` wrote this state at `createdAt`: its next revision. */
  recordRevision(documentId: string, state: Omit<RevisionModel, 'number'>): void {
    const revisions = this.revisions.get(documentId) ?? [];
    revisions.push({ number: (revisions.at(-1)?.number ?? 0) + 1, ...state });
    this.revisions.set(documentId, revisions);
  }

  /** A document's revisions, newest first, as listRevisions answers them. */
  revisionsOf(documentId: string): RevisionModel[] {
    return [...(this.revisions.get(documentId) ?? [])].reverse();
  }

  project(id: string): ProjectModel {
    const project = this.projects.get(id);
    if (project === undefined) throw new Error(`the model has no project ${id}`);
    return project;
  }

  /** The documents the viewer sees, in the order DESIGN §3 gives, optionally those of one project holding every term. */
  visibleDocuments(viewer: Viewer, filter: { terms?: readonly string[]; projectId?: string } = {}): DocumentModel[] {
    return [...this.documents.values()]
      .filter((d) => canSeeContent(viewer, this.contentFacts(d), this.isMember))
      .filter((d) => filter.projectId === undefined || d.projectId === filter.projectId)
      .filter((d) => filter.terms === undefined || holdsTerms(d, filter.terms))
      .sort(bySortTimeDesc);
  }

  visibleChats(viewer: Viewer, filter: { titleContains?: string; projectId?: string } = {}): ChatModel[] {
    return [...this.chats.values()]
      .filter((c) => canSeeContent(viewer, this.contentFacts(c), this.isMember))
      .filter((c) => filter.projectId === undefined || c.projectId === filter.projectId)
      .filter((c) => filter.titleContains === undefined || (c.title !== null && foldTitle(c.title).includes(filter.titleContains)))
      .sort(bySortTimeDesc);
  }

  /** Visible projects, newest first, each with whether it is someone else's shared with the viewer. */
  visibleProjects(viewer: Viewer): { id: string; isSharedWithYou: boolean }[] {
    return [...this.projects.values()]
      .filter((p) => canSeeProject(viewer, p, this.isMember))
      .sort(byCreatedDesc)
      .map((p) => ({ id: p.id, isSharedWithYou: isSharedWithViewer(viewer, p) }));
  }

  /** Visible templates in their order, each with whether it is its workspace's one default. */
  visibleTemplates(viewer: Viewer, includeSystem: boolean): { id: number; isDefault: boolean }[] {
    return [...this.templates.values()]
      .filter((t) => canSeeTemplate(viewer, t, includeSystem, this.isMember))
      .sort(templateOrder)
      .map((t) => ({ id: t.id, isDefault: t.isDefault }));
  }
}
