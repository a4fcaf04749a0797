import { fullFormats } from 'ajv-formats/dist/formats.js';
import { hasNonWhitespace, unstorable } from '../domain/content.js';
import { generateKey, hashKey, lastFour, scopesFor, type Scope } from '../domain/keys.js';
import { effectivePlan, isValidLookupKey } from '../domain/plans.js';
import { toIso } from '../domain/time.js';
import { UsageError } from '../errors.js';
import type { KeyRecord, Viewer } from '../store/store.js';
import { documentUrl, type ServiceDeps } from './context.js';

/**
 * What operators do with the `folio` command line: set up users, teams,
 * plans, keys and content. Every input is checked here, with a message that
 * says what to fix; the store then applies the same rules as the API.
 */

/**
 * An e-mail address as the API's schemas declare it (`format: email`, by
 * ajv-formats), so that no user is stored with an address `GET /me` would
 * show against its own format: at most 64 characters before the `@`, 254 in all.
 */
const EMAIL = fullFormats.email as RegExp;
const isEmail = (email: string) => EMAIL.test(email) && email.length <= 254 && email.lastIndexOf('@') <= 64;
const TITLE_MAX = 200;
/** The largest message count both databases store: PostgreSQL keeps it as a 32-bit integer. */
const MESSAGES_MAX = 2_147_483_647;

export interface KeyView {
  id: string;
  name: string | null;
  scopes: Scope[];
  last4: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

const keyView = (k: KeyRecord): KeyView => ({
  id: k.id,
  name: k.name,
  scopes: scopesFor(k.canWrite),
  last4: k.last4,
  createdAt: k.createdAt,
  lastUsedAt: k.lastUsedAt,
  revokedAt: k.revokedAt,
});

/** A plan argument: a lookup key such as `pro_monthly`, or `none` for no plan. */
export function parsePlan(value: string): string | null {
  if (value === 'none') return null;
  if (!isValidLookupKey(value)) {
    throw new UsageError(
      `malformed plan "${value}": use a price lookup key such as pro_monthly, team_yearly or enterprise (lowercase letters, digits, _ and -), or none`,
    );
  }
  return value;
}

/** Text that both databases store as it is given (unstorable), or `what` is refused. */
function storable<T extends string | undefined>(value: T, what: string): T {
  const fault = value === undefined ? null : unstorable(value);
  if (fault !== null) throw new UsageError(`${what} ${fault}`);
  return value;
}

/**
 * A name or title of nothing but whitespace is empty. Whitespace is Unicode's
 * (White_Space), as for a document's content: String.prototype.trim would
 * keep U+0085 NEXT LINE, so a name of it alone would pass.
 */
function requireText(value: string, what: string, max?: number): string {
  if (!hasNonWhitespace(value)) throw new UsageError(`${what} must not be empty`);
  if (max !== undefined && [...value].length > max) throw new UsageError(`${what} must be at most ${max} characters`);
  return storable(value, what);
}

/** An optional name or title: null when its option (`flag`) is left out, refused when empty. */
function optionalText(value: string | undefined, what: string, flag: string, thing: string): string | null {
  if (value === undefined) return null;
  if (!hasNonWhitespace(value)) throw new UsageError(`the ${thing} ${what} must not be empty; leave out ${flag} for a ${thing} without one`);
  return storable(value, `the ${thing} ${what}`);
}

export function adminService(deps: Pick<ServiceDeps, 'store' | 'clock' | 'config'>) {
  const { store, config } = deps;
  const now = () => toIso(deps.clock());

  async function user(id: string) {
    const u = await store.getUser(id);
    if (!u) throw new UsageError(`unknown user id "${id}" (user ids look like user_…; create one with: folio user create --email E)`);
    return u;
  }
  async function org(id: string) {
    const o = await store.getOrg(id);
    if (!o) throw new UsageError(`unknown organization id "${id}" (organization ids look like org_…; create one with: folio org create --name N)`);
    return o;
  }
  async function member(orgId: string, userId: string) {
    await org(orgId);
    if (!(await store.isMember(orgId, userId))) {
      throw new UsageError(`user ${userId} is not a member of organization ${orgId}; add them with: folio org add-member ${orgId} ${userId}`);
    }
  }
  /** A project the user can see in the scope: its workspace, or an error naming what is wrong. */
  async function visibleProject(viewer: Viewer, projectId: string) {
    const p = await store.getProject(projectId);
    if (!p) throw new UsageError(`unknown project id "${projectId}"`);
    if (!(await store.isProjectVisible(viewer, projectId))) {
      const where = viewer.orgId === null ? 'the personal workspace' : `organization ${viewer.orgId}`;
      throw new UsageError(`project ${projectId} is not visible to user ${viewer.userId} in ${where}`);
    }
    return p;
  }
  async function viewerFor(userId: string, orgId: string | undefined): Promise<Viewer> {
    await user(userId);
    if (orgId !== undefined) await member(orgId, userId);
    return { userId, orgId: orgId ?? null };
  }

  return {
    async createUser(input: { email: string; name?: string; plan?: string }) {
      const email = input.email.trim();
      if (!isEmail(email)) throw new UsageError(`"${input.email}" is not an e-mail address`);
      const plan = input.plan === undefined ? null : parsePlan(input.plan);
      const name = optionalText(input.name, 'name', '--name', 'user');
      return store.createUser({ email, name, plan, now: now() });
    },

    async setUserPlan(userId: string, planArg: string) {
      const plan = parsePlan(planArg);
      await user(userId);
      await store.setUserPlan(userId, plan);
      return { id: userId, plan };
    },

    async createOrg(input: { name: string; plan?: string }) {
      const plan = input.plan === undefined ? null : parsePlan(input.plan);
      return store.createOrg({ name: requireText(input.name, 'the organization name'), plan, now: now() });
    },

    async setOrgPlan(orgId: string, planArg: string) {
      const plan = parsePlan(planArg);
      await org(orgId);
      await store.setOrgPlan(orgId, plan);
      return { id: orgId, plan };
    },

    async addMember(orgId: string, userId: string) {
      await org(orgId);
      await user(userId);
      if (!(await store.addMember(orgId, userId, now()))) {
        throw new UsageError(`user ${userId} is already a member of organization ${orgId}`);
      }
    },

    async removeMember(orgId: string, userId: string) {
      await org(orgId);
      await user(userId);
      if (!(await store.removeMember(orgId, userId))) {
        throw new UsageError(`user ${userId} is not a member of organization ${orgId}`);
      }
    },

    /** The only time the secret exists outside the caller: it is returned once and stored as a hash. */
    async createKey(input: { userId: string; name?: string; write: boolean }) {
      const name = optionalText(input.name, 'name', '--name', 'key');
      await user(input.userId);
      const secret = generateKey();
      const hash = hashKey(secret);
      const record = await store.createKey({
        userId: input.userId,
        name,
        canWrite: input.write,
        hash,
        last4: lastFour(secret),
        now: now(),
      });
      // Made all the same: a plan can be set later. The key answers 402 until one grants API access (DESIGN §2).
      const principal = await store.findPrincipal(hash);
      const hasApiAccess = principal !== null && effectivePlan(principal.user.plan, principal.orgPlans, config.apiPlans) !== null;
      return { id: record.id, key: secret, scopes: scopesFor(record.canWrite), hasApiAccess };
    },

    listUsers: () => store.listUsers(),

    listOrgs: () => store.listOrgs(),

    async listMembers(orgId: string) {
      const members = await store.listMembers(orgId);
      if (members === null) throw new UsageError(`unknown organization id "${orgId}" (list them with: folio org list)`);
      return members;
    },

    async listKeys(userId: string): Promise<KeyView[]> {
      await user(userId);
      return (await store.listKeys(userId)).map(keyView);
    },

    async revokeKey(keyId: string) {
      const k = await store.revokeKey(keyId, now());
      if (!k) throw new UsageError(`unknown key id "${keyId}" (list a user's keys with: folio key list --user USER_ID)`);
      return { id: k.id, revokedAt: k.revokedAt! };
    },

    async createProject(input: { userId: string; name: string; orgId?: string; description?: string }) {
      await viewerFor(input.userId, input.orgId);
      return store.createProject({
        creatorId: input.userId,
        orgId: input.orgId ?? null,
        name: requireText(input.name, 'the project name'),
        description: storable(input.description, 'the project description') ?? null,
        now: now(),
      });
    },

    async shareProject(projectId: string, userId: string) {
      const p = await store.getProject(projectId);
      if (!p) throw new UsageError(`unknown project id "${projectId}"`);
      await user(userId);
      if (p.creatorId === userId) throw new UsageError(`user ${userId} created project ${projectId}; share it with someone else`);
      if (p.workspaceId.startsWith('org_') && !(await store.isMember(p.workspaceId, userId))) {
        throw new UsageError(`user ${userId} is not a member of organization ${p.workspaceId}, which owns project ${projectId}`);
      }
      // As addMember: a share that is already there is refused, not made again.
      if (!(await store.shareProject(projectId, userId))) throw new UsageError(`project ${projectId} is already shared with user ${userId}`);
    },

    async createTemplate(input: {
      title: string;
      userId?: string;
      orgId?: string;
      description?: string;
      system: boolean;
      isDefault: boolean;
    }) {
      requireText(input.title, 'the template title', TITLE_MAX);
      if (input.system && (input.userId !== undefined || input.orgId !== undefined)) {
        throw new UsageError('a system template belongs to no workspace: give --system without --user or --org');
      }
      // A template belongs to a user's workspace, a team's, or none (system).
      // A team template given with --org alone (DESIGN §5 makes --user
      // optional) is the operator's: no user is its creator, as none is a
      // system template's; with --user, that member is.
      if (!input.system && input.userId === undefined && input.orgId === undefined) {
        throw new UsageError('say whose template it is: --user USER_ID (personal), --org ORG_ID (a team\'s; with --user, that member creates it) or --system (built in)');
      }
      if (input.userId !== undefined) await user(input.userId);
      if (input.orgId !== undefined) {
        await org(input.orgId);
        if (input.userId !== undefined) await member(input.orgId, input.userId);
      }
      return store.createTemplate({
        title: input.title,
        description: storable(input.description, 'the template description') ?? null,
        workspaceId: input.system ? null : (input.orgId ?? input.userId!),
        creatorId: input.userId ?? null,
        isDefault: input.isDefault,
        now: now(),
      });
    },

    async createChat(input: { userId: string; title?: string; orgId?: string; projectId?: string; messages?: string }) {
      const title = optionalText(input.title, 'title', '--title', 'chat');
      const viewer = await viewerFor(input.userId, input.orgId);
      const messageCount = input.messages === undefined ? 0 : Number(input.messages);
      if (!Number.isSafeInteger(messageCount) || messageCount < 0 || messageCount > MESSAGES_MAX || !/^\d+$/.test(input.messages ?? '0')) {
        throw new UsageError(`--messages must be a whole number from 0 to ${MESSAGES_MAX}, got "${input.messages}"`);
      }
      const project = input.projectId === undefined ? null : await visibleProject(viewer, input.projectId);
      return store.createChat({
        creatorId: input.userId,
        workspaceId: project?.workspaceId ?? input.orgId ?? input.userId,
        projectId: project?.id ?? null,
        title,
        messageCount,
        now: now(),
      });
    },

    async createDocument(input: {
      userId: string;
      title: string;
      content: string;
      orgId?: string;
      projectId?: string;
      threadId?: string;
    }) {
      const viewer = await viewerFor(input.userId, input.orgId);
      requireText(input.title, 'the title', TITLE_MAX);
      if (!hasNonWhitespace(input.content)) throw new UsageError('the content must contain at least one non-whitespace character');
      storable(input.content, 'the content');
      if (input.projectId !== undefined) await visibleProject(viewer, input.projectId);
      // Whoever reads the document sees its chat's id: the chat must be one
      // its creator sees there, in the same place (the same project, or
      // outside projects in the same workspace), which the same people see.
      if (input.threadId !== undefined && !(await store.isChatVisible(viewer, input.threadId, input.projectId ?? null))) {
        throw new UsageError(
          `unknown chat id "${input.threadId}" for --thread, or not one that user sees in that workspace and ${input.projectId === undefined ? 'outside projects' : 'project'}: a document's chat is in its project, or outside projects with it`,
        );
      }
      const doc = await store.createDocument(
        viewer,
        { title: input.title, contentMarkdown: input.content, projectId: input.projectId ?? null, threadId: input.threadId ?? null },
        now(),
      );
      if (!doc) throw new UsageError(`the document could not be created in that workspace`);
      return { id: doc.id, url: documentUrl(config, doc.id) };
    },
  };
}

export type AdminService = ReturnType<typeof adminService>;
