import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { UsageError } from '../../src/errors.js';
import { hashKey } from '../../src/domain/keys.js';
import { useStore, type OpenStore } from './harness.js';
import { at } from './fixtures.js';

/** Users, organizations, memberships, keys, and the principal a key stands for. */
export function accountsContract(open: OpenStore): void {
  describe('users, organizations, memberships and keys', () => {
    const h = useStore(open);

    it('creates users, finds them by id and e-mail, and sets their plan', async () => {
      const email = `Ada.${h.make.unique()}@Example.com`;
      const user = await h.make.user({ email, name: 'Ada', plan: 'pro_monthly', now: at(1) });
      assert.match(user.id, /^user_/);
      assert.deepEqual(user, { id: user.id, email, name: 'Ada', plan: 'pro_monthly', createdAt: at(1) });
      assert.deepEqual(await h.store.getUser(user.id), user);
      assert.deepEqual(await h.store.findUserByEmail(email), user);
      assert.equal(await h.store.getUser('user_nobody'), null);
      assert.equal(await h.store.findUserByEmail(`nobody.${h.make.unique()}@example.com`), null);
      await h.store.setUserPlan(user.id, 'enterprise');
      assert.equal((await h.store.getUser(user.id))?.plan, 'enterprise');
      await h.store.setUserPlan(user.id, null);
      assert.equal((await h.store.getUser(user.id))?.plan, null);
      const nameless = await h.make.user({ name: null, plan: null });
      assert.deepEqual(await h.store.getUser(nameless.id), nameless);
    });

    async function assertTaken(email: string): Promise<void> {
      const first = await h.make.user({ email });
      for (const again of [email, email.toUpperCase()]) await assert.rejects(h.make.user({ email: again }), UsageError, again);
      assert.deepEqual(await h.store.getUser(first.id), first);
    }

    it('refuses a second user with an e-mail taken, whatever its case', async () => {
      await assertTaken(`same.${h.make.unique()}@example.com`);
    });

    it('creates organizations and sets their plan', async () => {
      const org = await h.make.org({ name: 'Acme', plan: 'team_yearly', now: at(2) });
      assert.match(org.id, /^org_/);
      assert.deepEqual(org, { id: org.id, name: 'Acme', plan: 'team_yearly', createdAt: at(2) });
      assert.deepEqual(await h.store.getOrg(org.id), org);
      assert.equal(await h.store.getOrg('org_nothing'), null);
      await h.store.setOrgPlan(org.id, null);
      assert.deepEqual(await h.store.getOrg(org.id), { ...org, plan: null });
    });

    it('adds a member once and removes them once', async () => {
      const [user, org] = [await h.make.user(), await h.make.org()];
      assert.equal(await h.store.isMember(org.id, user.id), false);
      assert.equal(await h.make.member(org.id, user.id), true);
      assert.equal(await h.make.member(org.id, user.id), false, 'already a member');
      assert.equal(await h.store.isMember(org.id, user.id), true);
      assert.equal(await h.make.leave(org.id, user.id), true);
      assert.equal(await h.make.leave(org.id, user.id), false, 'no longer a member');
      assert.equal(await h.store.isMember(org.id, user.id), false);
    });

    it('creates keys, lists them oldest first, and keeps the first revocation', async () => {
      const user = await h.make.user();
      const later = await h.make.key(user.id, { name: 'later', canWrite: true, now: at(20) });
      const earlier = await h.make.key(user.id, { name: null, now: at(10) });
      await h.make.key((await h.make.user()).id);
      assert.match(later.record.id, /^key_/);
      assert.deepEqual(later.record, {
        id: later.record.id,
        userId: user.id,
        name: 'later',
        canWrite: true,
        last4: later.secret.slice(-4),
        createdAt: at(20),
        lastUsedAt: null,
        revokedAt: null,
      });
      assert.deepEqual(await h.store.listKeys(user.id), [earlier.record, later.record]);
      const revoked = await h.store.revokeKey(earlier.record.id, at(30));
      assert.deepEqual(revoked, { ...earlier.record, revokedAt: at(30) });
      assert.deepEqual(await h.store.revokeKey(earlier.record.id, at(40)), revoked, 'revoked again');
      assert.equal(await h.store.revokeKey('key_nothing', at(40)), null);
      assert.deepEqual(await h.store.listKeys(user.id), [revoked, later.record]);
      assert.deepEqual(await h.store.listKeys('user_nobody'), []);
    });

    it('finds the principal of a live key, and none for an unknown or revoked one', async () => {
      const user = await h.make.user({ name: 'Grace', plan: 'pro' });
      const key = await h.make.key(user.id, { name: 'cli', canWrite: true });
      assert.deepEqual(await h.store.findPrincipal(key.hash), {
        keyId: key.record.id,
        keyName: 'cli',
        canWrite: true,
        lastUsedAt: null,
        user: { id: user.id, name: 'Grace', email: user.email, plan: 'pro' },
        orgPlans: [],
        organizations: [],
      });
      assert.equal(await h.store.findPrincipal(hashKey('fol_not_a_key')), null);
      const readOnly = await h.make.key(user.id);
      assert.equal((await h.store.findPrincipal(readOnly.hash))?.canWrite, false);
      await h.store.revokeKey(readOnly.record.id, at(50));
      assert.equal(await h.store.findPrincipal(readOnly.hash), null, 'revoked');
      assert.equal((await h.store.findPrincipal(key.hash))?.keyId, key.record.id, 'the other key still works');
    });

    it('shows changes of plans, memberships and last use at once', async () => {
      const user = await h.make.user({ plan: null });
      const key = await h.make.key(user.id);
      const principal = () => h.store.findPrincipal(key.hash);
      assert.equal((await principal())?.user.plan, null);
      await h.store.setUserPlan(user.id, 'pro_monthly');
      assert.equal((await principal())?.user.plan, 'pro_monthly');

      const org = await h.make.org({ plan: 'free' });
      await h.make.member(org.id, user.id);
      assert.deepEqual((await principal())?.orgPlans, ['free']);
      assert.deepEqual((await principal())?.organizations, [{ id: org.id, name: org.name, createdAt: org.createdAt }]);
      await h.store.setOrgPlan(org.id, 'enterprise');
      assert.deepEqual((await principal())?.orgPlans, ['enterprise']);
      await h.make.leave(org.id, user.id);
      assert.deepEqual([(await principal())?.orgPlans, (await principal())?.organizations], [[], []]);
      // Joining again comes after the memberships made meanwhile.
      const second = await h.make.org({ plan: 'team' });
      await h.make.member(second.id, user.id);
      await h.make.member(org.id, user.id);
      assert.deepEqual((await principal())?.orgPlans, ['team', 'enterprise']);

      await h.store.touchKey(key.record.id, at(60));
      assert.equal((await principal())?.lastUsedAt, at(60));
      assert.equal((await h.store.listKeys(user.id))[0]?.lastUsedAt, at(60));
      await h.store.touchKey(key.record.id, at(61));
      assert.equal((await principal())?.lastUsedAt, at(61));
    });
  });
}
