import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { generateKey, hashKey, lastFour } from '../../src/domain/keys.js';
import { toIso } from '../../src/domain/time.js';
import { workspaceForNewContent, type Viewer } from '../../src/domain/visibility.js';
import type {
  DocumentReplacement,
  KeyRecord,
  NewChat,
  NewDocument,
  NewProject,
  NewTemplate,
  OrgRecord,
  RevisionAuthor,
  Store,
  UpdateOutcome,
  UserRecord,
} from '../../src/store/store.js';
import type { ChatModel, DocumentModel, Model, ProjectModel, TemplateModel } from './model.js';

/** The instant the factories' clock starts at; each tick is one second later. */
const EPOCH = Date.parse('2026-01-01T00:00:00.000Z');

/** A time a test chooses: `seconds` (fractions allowed) after an instant later than any tick. */
export const at = (seconds: number): string => toIso(Date.parse('2026-06-01T00:00:00.000Z') + Math.round(seconds * 1000));

type With<T, K extends keyof T> = Partial<Omit<T, K>>;

/** The author a revision records: none when the change named none (the command line's). */
const authorOf = (author: RevisionAuthor | null | undefined) => ({ userId: author?.userId ?? null, keyName: author?.keyName ?? null });

/**
 * Factories with overrides: each writes through the store, as the command
 * line and the API do, and records what it wrote in the model. Times come
 * from the suite's clock unless given.
 */
export function fixtures(store: Store, model: Model) {
  let seconds = 0;
  const tick = (): string => toIso(EPOCH + ++seconds * 1000);
  const unique = (): string => randomBytes(6).toString('hex');

  return {
    tick,
    unique,

    user(overrides: Partial<{ email: string; name: string | null; plan: string | null; now: string }> = {}): Promise<UserRecord> {
      return store.createUser({ email: `user-${unique()}@example.com`, name: 'Someone', plan: 'pro', now: tick(), ...overrides });
    },

    org(overrides: Partial<{ name: string; plan: string | null; now: string }> = {}): Promise<OrgRecord> {
      return store.createOrg({ name: `Team ${unique()}`, plan: 'team', now: tick(), ...overrides });
    },

    async member(orgId: string, userId: string, now = tick()): Promise<boolean> {
      const added = await store.addMember(orgId, userId, now);
      model.members.set(orgId, (model.members.get(orgId) ?? new Set()).add(userId));
      return added;
    },

    async leave(orgId: string, userId: string): Promise<boolean> {
      const removed = await store.removeMember(orgId, userId);
      model.members.get(orgId)?.delete(userId);
      return removed;
    },

    async project(creatorId: string, overrides: With<NewProject, 'creatorId'> & { shareWith?: string[] } = {}): Promise<ProjectModel> {
      const { shareWith = [], ...rest } = overrides;
      const input: NewProject = { creatorId, orgId: null, name: `Project ${unique()}`, description: null, now: tick(), ...rest };
      const { id } = await store.createProject(input);
      const project: ProjectModel = {
        id,
        name: input.name,
        description: input.description,
        createdAt: input.now,
        workspaceId: input.orgId ?? creatorId,
        inTeam: input.orgId !== null,
        creatorId,
        sharedWith: [],
      };
      model.projects.set(id, project);
      for (const userId of shareWith) await this.share(id, userId);
      return project;
    },

    async share(projectId: string, userId: string): Promise<boolean> {
      const shared = await store.shareProject(projectId, userId);
      const project = model.projects.get(projectId);
      if (project !== undefined && !project.sharedWith.includes(userId)) project.sharedWith.push(userId);
      return shared;
    },

    /**
     * Creates a document as `viewer`; it must be created exactly where
     * workspaceForNewContent says (null: refused). Null when refused.
     */
    async document(viewer: Viewer, overrides: Partial<NewDocument> & { now?: string } = {}): Promise<DocumentModel | null> {
      const { now = tick(), ...rest } = overrides;
      const input: NewDocument = { title: 'Untitled document', contentMarkdown: 'Some text.', projectId: null, threadId: null, ...rest };
      const project = input.projectId === null ? null : (model.projects.get(input.projectId) ?? null);
      const expected = input.projectId !== null && project === null ? null : workspaceForNewContent(viewer, project, model.isMember);
      const row = await store.createDocument(viewer, input, now);
      assert.equal(row === null, expected === null, `createDocument ${row === null ? 'refused' : 'accepted'} a document that workspaceForNewContent ${expected === null ? 'refuses' : 'accepts'}`);
      if (row === null || expected === null) return null;
      assert.deepEqual({ title: row.title, threadId: row.threadId, updatedAt: row.updatedAt }, { title: input.title, threadId: input.threadId, updatedAt: null });
      const { author, ...fields } = input;
      const doc: DocumentModel = { ...fields, id: row.id, workspaceId: expected, createdAt: now, updatedAt: null };
      model.documents.set(doc.id, doc);
      model.recordRevision(doc.id, { createdAt: now, title: doc.title, contentMarkdown: doc.contentMarkdown, ...authorOf(author) });
      return doc;
    },

    /** Creates a document that must be accepted. */
    async doc(viewer: Viewer, overrides: Partial<NewDocument> & { now?: string } = {}): Promise<DocumentModel> {
      const doc = await this.document(viewer, overrides);
      assert.ok(doc, 'the document is created');
      return doc;
    },

    /** Replaces a document's text; the model follows when the store says it updated. */
    async update(
      viewer: Viewer,
      id: string,
      change: Partial<DocumentReplacement> = {},
      next: (previous: string | null) => string = () => tick(),
    ): Promise<UpdateOutcome> {
      const known = model.documents.get(id);
      const replacement: DocumentReplacement = { contentMarkdown: 'Replaced text.', expectedUpdatedAt: known?.updatedAt ?? null, ...change };
      const outcome = await store.updateDocument(viewer, id, replacement, next);
      if (outcome.status === 'updated' && known !== undefined) {
        Object.assign(known, { contentMarkdown: replacement.contentMarkdown, title: replacement.title ?? known.title, updatedAt: outcome.document.updatedAt });
        model.recordRevision(id, { createdAt: outcome.document.updatedAt!, title: known.title, contentMarkdown: known.contentMarkdown, ...authorOf(replacement.author) });
      }
      return outcome;
    },

    async chat(creatorId: string, overrides: With<NewChat, 'creatorId' | 'workspaceId'> & { orgId?: string | null } = {}): Promise<ChatModel> {
      const { orgId = null, ...rest } = overrides;
      const input = { projectId: null, title: `Chat ${unique()}`, messageCount: 3, now: tick(), ...rest };
      const workspaceId = input.projectId === null ? (orgId ?? creatorId) : model.project(input.projectId).workspaceId;
      const { id } = await store.createChat({ creatorId, workspaceId, ...input });
      const chat: ChatModel = { id, workspaceId, projectId: input.projectId, title: input.title, messageCount: input.messageCount, createdAt: input.now, updatedAt: null };
      model.chats.set(id, chat);
      return chat;
    },

    async template(overrides: Partial<NewTemplate> = {}): Promise<TemplateModel> {
      const input: NewTemplate = { title: `Template ${unique()}`, description: null, workspaceId: null, creatorId: null, isDefault: false, now: tick(), ...overrides };
      const { id } = await store.createTemplate(input);
      if (input.isDefault) for (const t of model.templates.values()) if (t.workspaceId === input.workspaceId) t.isDefault = false;
      const template: TemplateModel = { id, workspaceId: input.workspaceId, createdAt: input.now, isDefault: input.isDefault };
      model.templates.set(id, template);
      return template;
    },

    /** A key with a fresh secret (shown once, as the command line does). */
    async key(userId: string, overrides: Partial<{ name: string | null; canWrite: boolean; now: string }> = {}): Promise<{ secret: string; hash: string; record: KeyRecord }> {
      const secret = generateKey();
      const hash = hashKey(secret);
      const record = await store.createKey({ userId, name: 'agent', canWrite: false, hash, last4: lastFour(secret), now: tick(), ...overrides });
      return { secret, hash, record };
    },
  };
}

export type Fixtures = ReturnType<typeof fixtures>;
