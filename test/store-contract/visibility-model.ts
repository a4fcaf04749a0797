import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { Store } from '../../src/store/store.js';
import { checkView } from './check-view.js';
import { fixtures } from './fixtures.js';
import { RANDOM_RUNS, useStore, type OpenStore } from './harness.js';
import { Model } from './model.js';

/**
 * Random small worlds: 2–5 users, 0–3 teams, random memberships, personal
 * and team projects shared with anyone (members or not), documents created
 * by anyone in any scope and project (createDocument must accept exactly
 * what workspaceForNewContent accepts), chats, templates; then shares and
 * memberships added, and memberships removed, once the content exists.
 * Every user in every scope must then see what the predicates say. The
 * worlds share one store, each with a model of its own: anything of an
 * earlier world showing up fails as a leak.
 */

const index = fc.nat({ max: 20 });
const maybe = fc.option(index, { nil: null });

const worlds = fc.record({
  users: fc.integer({ min: 2, max: 5 }),
  teams: fc.integer({ min: 0, max: 3 }),
  memberships: fc.array(fc.tuple(index, index), { maxLength: 8 }),
  projects: fc.array(fc.record({ creator: index, team: maybe, shareWith: fc.array(index, { maxLength: 3 }) }), { maxLength: 4 }),
  documents: fc.array(fc.record({ author: index, team: maybe, project: maybe }), { maxLength: 8 }),
  chats: fc.array(fc.record({ creator: index, team: maybe, project: maybe }), { maxLength: 4 }),
  templates: fc.array(fc.record({ inTeam: fc.boolean(), owner: index, isDefault: fc.boolean() }), { maxLength: 3 }),
  /** Shares and memberships made once the content exists. */
  late: fc.array(fc.record({ share: fc.boolean(), of: index, to: index }), { maxLength: 3 }),
  removals: fc.array(index, { maxLength: 3 }),
});
type WorldPlan = typeof worlds extends fc.Arbitrary<infer T> ? T : never;

/** In every document of the worlds, and in every other chat title. */
const WORD = 'modelword';

/** `list[n]`, counting round; null when the list is empty or n is null. */
function pick<T>(list: readonly T[], n: number | null): T | null {
  return n === null || list.length === 0 ? null : list[n % list.length]!;
}

async function build(store: Store, plan: WorldPlan) {
  const model = new Model();
  const make = fixtures(store, model);
  const users: string[] = [];
  const teams: string[] = [];
  for (let i = 0; i < plan.users; i++) users.push((await make.user({ name: `u${i}` })).id);
  for (let i = 0; i < plan.teams; i++) teams.push((await make.org({ name: `t${i}` })).id);
  const joined: [string, string][] = [];
  for (const [team, user] of plan.memberships) {
    const orgId = pick(teams, team);
    const userId = pick(users, user)!;
    if (orgId !== null && (await make.member(orgId, userId))) joined.push([orgId, userId]);
  }
  const projects: string[] = [];
  for (const p of plan.projects) {
    const shareWith = [...new Set(p.shareWith.map((u) => pick(users, u)!))];
    projects.push((await make.project(pick(users, p.creator)!, { orgId: pick(teams, p.team), shareWith })).id);
  }
  for (const [i, d] of plan.documents.entries()) {
    const viewer = { userId: pick(users, d.author)!, orgId: pick(teams, d.team) };
    await make.document(viewer, { title: `Document ${i}`, contentMarkdown: `${WORD} ${i}`, projectId: pick(projects, d.project) });
  }
  for (const [i, c] of plan.chats.entries()) {
    await make.chat(pick(users, c.creator)!, { orgId: pick(teams, c.team), projectId: pick(projects, c.project), title: i % 2 === 0 ? `${WORD} chat ${i}` : `Chat ${i}` });
  }
  for (const t of plan.templates) {
    const workspaceId = (t.inTeam ? pick(teams, t.owner) : null) ?? pick(users, t.owner)!;
    await make.template({ workspaceId, creatorId: users[0]!, isDefault: t.isDefault });
  }
  for (const l of plan.late) {
    const userId = pick(users, l.to)!;
    const target = pick(l.share ? projects : teams, l.of);
    if (target !== null && l.share) await make.share(target, userId);
    if (target !== null && !l.share && (await make.member(target, userId))) joined.push([target, userId]);
  }
  for (const r of plan.removals) {
    const pair = pick(joined, r);
    if (pair !== null) await make.leave(...pair);
  }
  return { model, users, teams };
}

export function visibilityModelContract(open: OpenStore): void {
  describe('who sees what, in random worlds', () => {
    const h = useStore(open);

    it('shows every user, in every scope, what the domain predicates say', async () => {
      await fc.assert(
        fc.asyncProperty(worlds, async (plan) => {
          const { model, users, teams } = await build(h.store, plan);
          for (const [u, userId] of users.entries()) {
            for (const orgId of [null, ...teams]) {
              await checkView(h.store, model, { userId, orgId }, `user ${u} in ${orgId === null ? 'personal scope' : `team ${teams.indexOf(orgId)}`}`, WORD);
            }
          }
        }),
        { numRuns: RANDOM_RUNS },
      );
    });
  });
}
