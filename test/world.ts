import type { TestContext } from './helpers.js';

/**
 * The access-matrix world: five users, two teams, and one document and one
 * chat in every place content can live (a personal workspace, a personal
 * project, a team outside projects, a team project), written through the
 * store like the command line does. Who sees what is not decided here: the
 * tests state it in their own tables.
 */

export const CALLERS = ['A', 'B', 'C', 'D', 'E'] as const;
export type CallerName = (typeof CALLERS)[number];

/** The role each caller plays. */
export const ROLE: Record<CallerName, string> = {
  A: 'owner',
  B: 'teammate',
  C: 'project sharee',
  D: 'outsider',
  E: 'member of another team',
};

/** The request's scope: no organizationId, or team T's, or team U's. */
export const SCOPES = ['personal', 'T', 'U'] as const;
export type ScopeName = (typeof SCOPES)[number];
export type TeamName = Exclude<ScopeName, 'personal'>;

/** Team memberships as created (A and B in T, E in U; C and D in none). */
export const TEAMS: Record<TeamName, CallerName[]> = { T: ['A', 'B'], U: ['E'] };

interface PlaceSpec {
  /** Who creates the place's content (and the project, if any). */
  by: CallerName;
  team: TeamName | null;
  /** A project, with the users it is shared with; null for content outside projects. */
  project: { shareWith: CallerName[] } | null;
}

/**
 * Every place content lives in. `tShared` is also shared with C and E, who
 * are not members of T (the store accepts it; the command line refuses it):
 * a share of a team project grants nothing without membership.
 */
export const PLACES = {
  aHome: { by: 'A', team: null, project: null },
  aPrivate: { by: 'A', team: null, project: { shareWith: [] } },
  aShared: { by: 'A', team: null, project: { shareWith: ['C'] } },
  bHome: { by: 'B', team: null, project: null },
  cHome: { by: 'C', team: null, project: null },
  cOwn: { by: 'C', team: null, project: { shareWith: [] } },
  dHome: { by: 'D', team: null, project: null },
  eHome: { by: 'E', team: null, project: null },
  tHome: { by: 'B', team: 'T', project: null },
  tPrivate: { by: 'A', team: 'T', project: { shareWith: [] } },
  tShared: { by: 'A', team: 'T', project: { shareWith: ['B', 'C', 'E'] } },
  tOfB: { by: 'B', team: 'T', project: { shareWith: [] } },
  uHome: { by: 'E', team: 'U', project: null },
  uProject: { by: 'E', team: 'U', project: { shareWith: [] } },
} as const satisfies Record<string, PlaceSpec>;

export type PlaceName = keyof typeof PLACES;
export const PLACE_NAMES = Object.keys(PLACES) as PlaceName[];
export type ProjectPlace = { [K in PlaceName]: (typeof PLACES)[K]['project'] extends null ? never : K }[PlaceName];
export const PROJECT_PLACES = PLACE_NAMES.filter((p) => PLACES[p].project !== null) as ProjectPlace[];

/** A word found in every document of the world, and in every chat title. */
export const COMMON_WORD = 'leakcheck';

export interface WorldUser {
  id: string;
  /** Secrets of a read-only key and of a key with write access. */
  read: string;
  write: string;
}

export interface World {
  users: Record<CallerName, WorldUser>;
  teams: Record<TeamName, string>;
  projects: Record<ProjectPlace, string>;
  /** One document per place; `word` occurs in no other document (nor is a prefix of another's word). */
  docs: Record<PlaceName, { id: string; word: string; content: string }>;
  /** One chat per place; `word` occurs in no other chat title. */
  chats: Record<PlaceName, { id: string; word: string }>;
  templates: { system: number[]; aPersonal: number; bPersonal: number; T: number; U: number };
  /** Query or body parameters for a scope: `{}` or `{ organizationId }`. */
  scope(scope: ScopeName): { organizationId?: string };
}

/** A distinct, fixed-length marker word per place, so no marker is a prefix of another. */
const marker = (i: number) => `qx${String(i).padStart(2, '0')}z`;

export async function buildWorld(t: TestContext): Promise<World> {
  const { make } = t;
  const tick = () => t.clock.advance(1000);

  const users = {} as Record<CallerName, WorldUser>;
  for (const name of CALLERS) {
    const u = await make.user({ name: `${name} (${ROLE[name]})`, plan: 'pro_monthly' });
    users[name] = {
      id: u.id,
      read: (await make.key(u.id, { name: `${name} read` })).secret,
      write: (await make.key(u.id, { name: `${name} write`, write: true })).secret,
    };
  }
  const teams = {} as Record<TeamName, string>;
  for (const team of ['T', 'U'] as const) {
    teams[team] = (await make.org({ name: `Team ${team}`, members: TEAMS[team].map((n) => users[n].id) })).id;
  }

  const projects = {} as Record<ProjectPlace, string>;
  const docs = {} as World['docs'];
  const chats = {} as World['chats'];
  let i = 0;
  for (const place of PLACE_NAMES) {
    const spec: PlaceSpec = PLACES[place];
    const by = users[spec.by].id;
    const orgId = spec.team === null ? null : teams[spec.team];
    let projectId: string | null = null;
    if (spec.project !== null) {
      projectId = (await make.project(by, { orgId, name: `Project ${place}`, shareWith: spec.project.shareWith.map((n) => users[n].id) })).id;
      projects[place as ProjectPlace] = projectId;
    }
    const word = marker(i++);
    tick();
    const content = `# ${place}\n\nThe document of ${place}. Marker ${word}; ${COMMON_WORD}.`;
    const doc = await make.document(by, { orgId, projectId, title: `Document of ${place}`, content });
    docs[place] = { id: doc.id, word, content };
    tick();
    const chat = await make.chat(by, { orgId, projectId, title: `Chat of ${place} ${word} ${COMMON_WORD}`, messages: 2 });
    chats[place] = { id: chat.id, word };
  }

  tick();
  const system = [(await make.template({ title: 'System one' })).id, (await make.template({ title: 'System two', isDefault: true })).id];
  const templates = {
    system,
    aPersonal: (await make.template({ title: 'A personal', workspaceId: users.A.id, creatorId: users.A.id })).id,
    bPersonal: (await make.template({ title: 'B personal', workspaceId: users.B.id, creatorId: users.B.id })).id,
    T: (await make.template({ title: 'Team T', workspaceId: teams.T, creatorId: users.A.id })).id,
    U: (await make.template({ title: 'Team U', workspaceId: teams.U, creatorId: users.E.id })).id,
  };

  return {
    users,
    teams,
    projects,
    docs,
    chats,
    templates,
    scope: (scope) => (scope === 'personal' ? {} : { organizationId: teams[scope] }),
  };
}
