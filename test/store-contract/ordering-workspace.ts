import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { OrgRecord } from '../../src/store/store.js';
import { ALL } from './check-view.js';
import { useStore, type OpenStore } from './harness.js';
import { ORG_NAMES } from './model.js';
import { at } from './fixtures.js';

/**
 * DESIGN §3's other orders: projects newest first (ties by id descending),
 * templates system first then newest first, a principal's organizations by
 * name as people sort names (then id) and their plans in joining order.
 */
export function workspaceOrderingContract(open: OpenStore): void {
  describe('the order of projects, templates and organizations', () => {
    const h = useStore(open);

    it('lists projects newest first, ties by id descending, in pages', async () => {
      const [owner, other] = [await h.make.user(), await h.make.user()];
      for (let i = 0; i < 9; i++) await h.make.project(owner.id, { now: at((i * 4) % 5) });
      for (let i = 0; i < 4; i++) await h.make.project(other.id, { now: at(i % 3), shareWith: [owner.id] });
      const viewer = { userId: owner.id, orgId: null };
      const expected = h.model.visibleProjects(viewer);
      assert.equal(expected.length, 13);
      for (const limit of [1, 4, 12, 13, ALL]) {
        const rows = await h.store.listProjects(viewer, limit);
        assert.deepEqual(rows.map((r) => ({ id: r.id, isSharedWithYou: r.isSharedWithYou })), expected.slice(0, limit), `the first ${limit}`);
      }
    });

    it('lists system templates first, then newest first, ties by id descending', async () => {
      const user = await h.make.user();
      for (let i = 0; i < 10; i++) {
        const own = i % 2 === 0;
        await h.make.template({ workspaceId: own ? user.id : null, creatorId: own ? user.id : null, now: at(10 - (i % 4)) });
      }
      const viewer = { userId: user.id, orgId: null };
      for (const includeSystem of [true, false]) {
        const expected = h.model.visibleTemplates(viewer, includeSystem);
        for (const limit of [1, 3, 6, ALL]) {
          const rows = await h.store.listTemplates(viewer, includeSystem, limit);
          assert.deepEqual(rows.map((r) => r.id), expected.slice(0, limit).map((t) => t.id), `includeSystem ${includeSystem}, limit ${limit}`);
        }
      }
      const flags = (await h.store.listTemplates(viewer, true, ALL)).map((r) => r.isSystem);
      assert.deepEqual(flags, [true, true, true, true, true, false, false, false, false, false]);
    });

    it("sorts a principal's organizations by name as people do, then by id, and their plans by joining", async () => {
      const user = await h.make.user();
      const names = ['Zeta', 'Beta', 'alpha', 'Team 10', 'Team 2', 'Émile', 'Same', 'Same'];
      const orgs: OrgRecord[] = [];
      for (const [i, name] of names.entries()) orgs.push(await h.make.org({ name, plan: i === 3 ? null : `team_${i}` }));
      // Joined in another order than created; the last two in the same instant.
      const joins = [5, 0, 7, 2, 1, 3, 6, 4];
      for (const [n, i] of joins.entries()) assert.equal(await h.make.member(orgs[i]!.id, user.id, at(100 + Math.min(n, 6))), true);
      const key = await h.make.key(user.id);
      const principal = await h.store.findPrincipal(key.hash);
      assert.ok(principal);
      assert.deepEqual(
        principal.organizations.map((o) => o.name),
        ['alpha', 'Beta', 'Émile', 'Same', 'Same', 'Team 2', 'Team 10', 'Zeta'],
      );
      const byName = [...orgs].sort((a, b) => ORG_NAMES.compare(a.name, b.name) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      assert.deepEqual(principal.organizations, byName.map((o) => ({ id: o.id, name: o.name, createdAt: o.createdAt })));
      assert.deepEqual(principal.orgPlans, joins.map((i) => orgs[i]!.plan));
    });
  });
}
