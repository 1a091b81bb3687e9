// The bounded semaphore under the pool's queue and the organizations' bulkhead (D129, D132).
import { describe, expect, it } from 'vitest';
import { BoundedSemaphore, BusyError, KeyedSemaphores } from '../../../src/lib/bounded-semaphore.ts';

describe('BoundedSemaphore', () => {
  it('hands places out first come, first served, up to its limit', async () => {
    const semaphore = new BoundedSemaphore('test', { limit: 2, queue: 5, waitMs: 10_000 });
    await semaphore.acquire();
    await semaphore.acquire();
    const order: number[] = [];
    const third = semaphore.acquire().then(() => order.push(3));
    const fourth = semaphore.acquire().then(() => order.push(4));
    expect(semaphore.waiting).toBe(2);
    semaphore.release();
    await third;
    semaphore.release();
    await fourth;
    expect(order).toEqual([3, 4]);
    expect(semaphore.held).toBe(2);
    semaphore.release();
    semaphore.release();
    expect(semaphore.idle).toBe(true);
  });

  it('refuses at once when its queue is full', async () => {
    const semaphore = new BoundedSemaphore('test', { limit: 1, queue: 1, waitMs: 10_000 });
    await semaphore.acquire();
    const queued = semaphore.acquire();
    await expect(semaphore.acquire()).rejects.toMatchObject({ name: 'BusyError', reason: 'queue_full' });
    semaphore.release();
    await queued;
    expect(semaphore.held).toBe(1);
  });

  it('refuses a caller that waited past its deadline, and forgets it', async () => {
    const semaphore = new BoundedSemaphore('test', { limit: 1, queue: 5, waitMs: 30 });
    await semaphore.acquire();
    const error = await semaphore.acquire().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BusyError);
    expect(error).toMatchObject({ reason: 'wait_timeout' });
    expect(semaphore.waiting).toBe(0);
    semaphore.release();
    expect(semaphore.idle).toBe(true);
  });
});

describe('KeyedSemaphores', () => {
  it('keeps one limit per key, releases once, and forgets idle keys', async () => {
    const places = new KeyedSemaphores('organization', { limit: 1, queue: 0, waitMs: 1000 });
    const releaseA = await places.acquire('a');
    await expect(places.acquire('a')).rejects.toBeInstanceOf(BusyError);
    const releaseB = await places.acquire('b');
    expect(places.held('a')).toBe(1);
    releaseA();
    releaseA();
    expect(places.held('a')).toBe(0);
    const again = await places.acquire('a');
    expect(places.held('a')).toBe(1);
    again();
    releaseB();
    expect(places.held('b')).toBe(0);
  });
});
