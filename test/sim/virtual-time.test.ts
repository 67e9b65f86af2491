import { describe, expect, it } from 'vitest';
import { Actor, VirtualTime } from '../../sim/virtual-time';

describe('VirtualTime', () => {
  it('fires timers in time order on the virtual clock, and restores the real timers afterwards', async () => {
    const vt = new VirtualTime(0);
    const fired: string[] = [];
    const realSetTimeout = globalThis.setTimeout;
    const uninstall = vt.install();
    setTimeout(() => fired.push(`b@${vt.now}`), 2_000);
    setTimeout(() => fired.push(`a@${vt.now}`), 1_000);
    const cancelled = setTimeout(() => fired.push('never'), 1_500);
    clearTimeout(cancelled);
    await vt.runUntil(10_000);
    uninstall();
    expect(fired).toEqual(['a@1000', 'b@2000']);
    expect(globalThis.setTimeout).toBe(realSetTimeout);
  });

  it("drops a dead actor's timers and holds a frozen actor's until it resumes, in the order they fell due", async () => {
    const vt = new VirtualTime(0);
    const fired: string[] = [];
    const uninstall = vt.install();
    const frozen = new Actor('worker', 1, 0);
    const dead = new Actor('worker', 2, 0);
    vt.runAs(frozen, () => {
      setTimeout(() => fired.push(`frozen-2s@${vt.now}`), 2_000);
      setTimeout(() => fired.push(`frozen-1s@${vt.now}`), 1_000);
    });
    vt.runAs(dead, () => setTimeout(() => fired.push('dead'), 1_000));
    vt.scheduleSystem(500, () => {
      frozen.frozenUntil = 5_000;
      dead.dead = true;
    });
    vt.scheduleSystem(3_000, () => fired.push(`system@${vt.now}`));
    await vt.runUntil(10_000);
    uninstall();
    expect(fired).toEqual(['system@3000', 'frozen-1s@5000', 'frozen-2s@5000']);
  });

  it('keeps the actor of the code that scheduled a timer across awaits', async () => {
    const vt = new VirtualTime(0);
    const seen: (string | undefined)[] = [];
    const uninstall = vt.install();
    const actor = new Actor('notifier', 1, 0);
    void vt.runAs(actor, async () => {
      await Promise.resolve();
      setTimeout(() => seen.push(VirtualTime.actor()?.name), 10);
    });
    await vt.runUntil(100);
    uninstall();
    expect(seen).toEqual(['notifier#1']);
  });
});
