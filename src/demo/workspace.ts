import { hashKey } from '../domain/keys.js';
import { UsageError } from '../errors.js';
import type { AdminService } from '../services/admin.js';
import type { Store } from '../store/store.js';
import { demoDocuments } from './content.js';

export const DEMO_EMAIL = 'demo@folio.local';
const TEAMMATE_EMAIL = 'grace@folio.local';

/**
 * Creates the demo workspace unless it already exists (its user and their
 * teammate), then makes a fresh read key and write key (secrets are never
 * stored, so they cannot be printed again). Running it twice creates the
 * workspace once. All of it is one transaction: a run that fails or is
 * stopped half-way leaves nothing behind, so the next run makes the whole
 * workspace.
 */
export function ensureDemoWorkspace(store: Store, adminOn: (tx: Store) => AdminService) {
  return store.atomically((tx) => ensureInTransaction(adminOn(tx), tx));
}

async function ensureInTransaction(admin: AdminService, store: Store) {
  const existing = await store.findUserByEmail(DEMO_EMAIL);
  const teammate = await store.findUserByEmail(TEAMMATE_EMAIL);
  // What would stop the workspace half-made is checked before anything is
  // written; the workspace is there when both of its users are.
  if (existing === null && teammate !== null) {
    throw new UsageError(
      `${TEAMMATE_EMAIL} is already the e-mail of a user, and the demo workspace needs it for its teammate; nothing was created (the demo is for a database of its own)`,
    );
  }
  if (existing !== null && teammate === null) {
    throw new UsageError(
      `${DEMO_EMAIL} is already the e-mail of a user who is not the demo's (the demo workspace has no teammate ${TEAMMATE_EMAIL} here); nothing was created (the demo is for a database of its own)`,
    );
  }
  const userId = existing?.id ?? (await createDemoWorkspace(admin, store));
  const read = await admin.createKey({ userId, name: 'demo read key', write: false });
  const write = await admin.createKey({ userId, name: 'demo write key', write: true });
  // The demo user's team, as their key sees it.
  const teamId = (await store.findPrincipal(hashKey(read.key)))?.organizations[0]?.id ?? null;
  return { userId, key: read.key, writeKey: write.key, teamId, created: existing === null };
}

async function createDemoWorkspace(admin: AdminService, store: Store): Promise<string> {
  const ada = await admin.createUser({ email: DEMO_EMAIL, name: 'Ada Demo', plan: 'pro_monthly' });
  const grace = await admin.createUser({ email: TEAMMATE_EMAIL, name: 'Grace Teammate', plan: 'free' });
  const team = await admin.createOrg({ name: 'Acme Research', plan: 'team_monthly' });
  await admin.addMember(team.id, ada.id);
  await admin.addMember(team.id, grace.id);

  const launch = await admin.createProject({ userId: ada.id, name: 'Product launch', description: 'Everything for the 1.0 launch, shared with Grace' });
  await admin.shareProject(launch.id, grace.id);
  const journal = await admin.createProject({ userId: ada.id, name: 'Private journal', description: 'Only Ada sees this' });
  const roadmap = await admin.createProject({ userId: ada.id, orgId: team.id, name: 'Roadmap (private)', description: 'A team project not shared with anyone' });

  // Built-in templates are everyone's: a database that has some keeps them, and its default.
  const builtIn = await store.listTemplates({ userId: ada.id, orgId: null }, true, 1);
  if (builtIn.length === 0) {
    await admin.createTemplate({ title: 'Meeting notes', description: 'Attendees, agenda, decisions, actions', system: true, isDefault: true });
    await admin.createTemplate({ title: 'Project brief', description: 'Problem, goals, non-goals, plan', system: true, isDefault: false });
  }
  await admin.createTemplate({ title: 'Incident postmortem', description: 'Impact, timeline, causes, follow-ups', orgId: team.id, userId: ada.id, system: false, isDefault: true });
  await admin.createTemplate({ title: 'Weekly review', description: 'Done, next, blocked', userId: ada.id, system: false, isDefault: true });

  const planning = await admin.createChat({ userId: ada.id, title: 'Planning the launch', projectId: launch.id, messages: '24' });
  await admin.createChat({ userId: ada.id, title: 'Draft a blog post about search', messages: '8' });
  await admin.createChat({ userId: grace.id, title: 'Q3 roadmap discussion', orgId: team.id, messages: '15' });
  await admin.createChat({ userId: ada.id, title: 'Journal prompts', projectId: journal.id, messages: '3' });

  const placeOf = {
    personal: {},
    launch: { projectId: launch.id },
    journal: { projectId: journal.id },
    team: { orgId: team.id },
    roadmap: { orgId: team.id, projectId: roadmap.id },
  } as const;
  for (const doc of demoDocuments) {
    await admin.createDocument({
      userId: ada.id,
      title: doc.title,
      content: doc.content,
      ...placeOf[doc.place],
      ...(doc.fromChat ? { threadId: planning.id } : {}),
    });
  }
  return ada.id;
}
