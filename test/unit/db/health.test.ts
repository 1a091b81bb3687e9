// Which failures mean "the database is unreachable" (503 and a probe), and the probe's cycle (decisions D24).
import { describe, expect, it } from 'vitest';
import { isConnectionFailure, isDatabaseUnavailable, trackHealth } from '../../../src/db/health.ts';
import { isPoolBusy, PoolBusyError } from '../../../src/db/pool-gate.ts';
import { quietSpell, waitUntil } from '../../helpers/wait.ts';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('isDatabaseUnavailable', () => {
  it.each([
    withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'),
    withCode('read ECONNRESET', 'ECONNRESET'),
    new Error('Connection terminated unexpectedly'),
    new Error('Connection terminated due to connection timeout'),
    new Error('Query read timeout'),
    withCode('terminating connection due to administrator command', '57P01'),
    withCode('the database system is starting up', '57P03'),
    withCode('connection failure', '08006'),
    new AggregateError([withCode('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED')], 'all refused'),
  ])('is true for %s', (error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
    expect(isConnectionFailure(error)).toBe(true);
  });

  it('is true for a statement timeout, which is no connection failure', () => {
    const timeout = withCode('canceling statement due to statement timeout', '57014');
    expect(isDatabaseUnavailable(timeout)).toBe(true);
    expect(isConnectionFailure(timeout)).toBe(false);
  });

  it('is false for a wait in a busy pool, which is not an outage (D129)', () => {
    const queued = new Error('timeout exceeded when trying to connect');
    expect(isDatabaseUnavailable(queued)).toBe(false);
    expect(isConnectionFailure(queued)).toBe(false);
    expect(isPoolBusy(queued)).toBe(true);
    expect(isPoolBusy(new PoolBusyError('database pool', 'wait_timeout'))).toBe(true);
    expect(isPoolBusy(new Error('Connection terminated due to connection timeout'))).toBe(false);
  });

  it.each([
    withCode('duplicate key value violates unique constraint', '23505'),
    withCode('invalid byte sequence for encoding "UTF8": 0x00', '22021'),
    new Error('something else'),
    'not an error',
    undefined,
  ])('is false for %s', (error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});

describe('trackHealth', () => {
  it('stays available after a lost connection when a probe gets through', async () => {
    let probes = 0;
    const health = trackHealth(async () => void probes++, 20);
    expect(health.report(withCode('read ECONNRESET', 'ECONNRESET'))).toBe(true);
    await waitUntil(() => probes > 0, { message: 'the probe' });
    expect(health.available).toBe(true);
    health.stop();
  });

  it('is unavailable while probes fail, and available again after the first one that succeeds', async () => {
    let reachable = false;
    let refused = 0;
    const health = trackHealth(async () => {
      if (!reachable) {
        refused++;
        throw withCode('connect ECONNREFUSED', 'ECONNREFUSED');
      }
    }, 20);
    health.report(withCode('connect ECONNREFUSED', 'ECONNREFUSED'));
    await waitUntil(() => refused >= 2, { message: 'two failed probes' });
    expect(health.available).toBe(false);
    reachable = true;
    await waitUntil(() => health.available, { message: 'a probe that gets through' });
    expect(health.available).toBe(true);
    health.stop();
  });

  it('ignores failures that are not about the connection', async () => {
    let probes = 0;
    const health = trackHealth(async () => void probes++, 20);
    expect(health.report(withCode('duplicate key', '23505'))).toBe(false);
    await quietSpell(50); // a few probe intervals
    expect(probes).toBe(0);
    expect(health.available).toBe(true);
    health.stop();
  });
});
