// decisions §20: business hours in the organization's timezone — listed days, closed days, a day listed twice, and
// the DST nights of Europe and America (the local weekday and time move, the week's wall-clock hours do not).
import { describe, expect, it } from 'vitest';
import {
  type BusinessHours,
  instantOf,
  isOpenAt,
  wasOpenBetween,
} from '../../../../src/modules/automation/business-hours.ts';

const weekdays9to17: BusinessHours = {
  enabled: true,
  week: (['mon', 'tue', 'wed', 'thu', 'fri'] as const).map((day) => ({ day, open: '09:00', close: '17:00' })),
};
const at = (iso: string) => new Date(iso);

describe('isOpenAt', () => {
  it('is open inside a listed interval, closed at its close and on days not listed', () => {
    // 2026-03-02 is a Monday; Lisbon is UTC+0 in winter.
    expect(isOpenAt(weekdays9to17, 'Europe/Lisbon', at('2026-03-02T09:00:00Z'))).toBe(true);
    expect(isOpenAt(weekdays9to17, 'Europe/Lisbon', at('2026-03-02T16:59:59Z'))).toBe(true);
    expect(isOpenAt(weekdays9to17, 'Europe/Lisbon', at('2026-03-02T17:00:00Z'))).toBe(false);
    expect(isOpenAt(weekdays9to17, 'Europe/Lisbon', at('2026-03-02T08:59:59Z'))).toBe(false);
    expect(isOpenAt(weekdays9to17, 'Europe/Lisbon', at('2026-03-07T12:00:00Z'))).toBe(false); // Saturday
  });

  it('reads the weekday and time in the organization’s timezone', () => {
    // Monday 23:30 UTC is Tuesday 08:30 in Tokyo (closed) and Monday 18:30 in New York (closed);
    // Tuesday 00:30 UTC is Tuesday 09:30 in Tokyo (open).
    expect(isOpenAt(weekdays9to17, 'Asia/Tokyo', at('2026-03-02T23:30:00Z'))).toBe(false);
    expect(isOpenAt(weekdays9to17, 'Asia/Tokyo', at('2026-03-03T00:30:00Z'))).toBe(true);
    // Friday 23:30 UTC is Saturday in Tokyo: closed, though Friday 17:00 Tokyo was hours before.
    expect(isOpenAt(weekdays9to17, 'Asia/Tokyo', at('2026-03-06T23:30:00Z'))).toBe(false);
    expect(isOpenAt(weekdays9to17, 'America/New_York', at('2026-03-02T14:30:00Z'))).toBe(true);
  });

  it('takes a day listed twice (a lunch break) and a close of 24:00', () => {
    const split: BusinessHours = {
      enabled: true,
      week: [
        { day: 'sat', open: '09:00', close: '12:00' },
        { day: 'sat', open: '14:00', close: '24:00' },
      ],
    };
    expect(isOpenAt(split, 'UTC', at('2026-03-07T11:00:00Z'))).toBe(true);
    expect(isOpenAt(split, 'UTC', at('2026-03-07T13:00:00Z'))).toBe(false);
    expect(isOpenAt(split, 'UTC', at('2026-03-07T23:59:00Z'))).toBe(true);
    expect(isOpenAt(split, 'UTC', at('2026-03-08T00:00:00Z'))).toBe(false);
  });

  it('is always open while disabled, and never with an empty week', () => {
    expect(isOpenAt({ enabled: false, week: [] }, 'UTC', at('2026-03-07T03:00:00Z'))).toBe(true);
    expect(isOpenAt({ enabled: true, week: [] }, 'UTC', at('2026-03-02T12:00:00Z'))).toBe(false);
  });

  it('keeps wall-clock hours across DST: Berlin opens at 09:00 local before and after the spring change', () => {
    // Clocks go forward on Sunday 2026-03-29 (CET +1 -> CEST +2). Monday 23 March 09:00 local is 08:00 UTC; Monday
    // 30 March 09:00 local is 07:00 UTC.
    expect(isOpenAt(weekdays9to17, 'Europe/Berlin', at('2026-03-23T08:00:00Z'))).toBe(true);
    expect(isOpenAt(weekdays9to17, 'Europe/Berlin', at('2026-03-23T07:30:00Z'))).toBe(false);
    expect(isOpenAt(weekdays9to17, 'Europe/Berlin', at('2026-03-30T07:00:00Z'))).toBe(true);
    expect(isOpenAt(weekdays9to17, 'Europe/Berlin', at('2026-03-30T15:00:00Z'))).toBe(false); // 17:00 CEST
    // New York's autumn change (Sunday 2026-11-01, EDT -4 -> EST -5): Monday 2 November 09:00 local is 14:00 UTC.
    expect(isOpenAt(weekdays9to17, 'America/New_York', at('2026-11-02T13:30:00Z'))).toBe(false);
    expect(isOpenAt(weekdays9to17, 'America/New_York', at('2026-11-02T14:00:00Z'))).toBe(true);
  });

  it('counts the hours of a DST night by the wall clock', () => {
    const sundayNight: BusinessHours = { enabled: true, week: [{ day: 'sun', open: '01:00', close: '04:00' }] };
    // Berlin, 2026-03-29: 02:00–03:00 local does not exist; 01:00 CET is 00:00 UTC, 04:00 CEST is 02:00 UTC.
    expect(isOpenAt(sundayNight, 'Europe/Berlin', at('2026-03-29T00:00:00Z'))).toBe(true);
    expect(isOpenAt(sundayNight, 'Europe/Berlin', at('2026-03-29T01:59:00Z'))).toBe(true);
    expect(isOpenAt(sundayNight, 'Europe/Berlin', at('2026-03-29T02:00:00Z'))).toBe(false);
    // Berlin, 2026-10-25: 02:00–03:00 local happens twice; 04:00 CET is 03:00 UTC.
    expect(isOpenAt(sundayNight, 'Europe/Berlin', at('2026-10-25T02:59:00Z'))).toBe(true);
    expect(isOpenAt(sundayNight, 'Europe/Berlin', at('2026-10-25T03:00:00Z'))).toBe(false);
  });
});

describe('instantOf', () => {
  it('finds the instant of a local time, DST nights included', () => {
    expect(new Date(instantOf('Europe/Berlin', 2026, 3, 30, 9 * 60)).toISOString()).toBe('2026-03-30T07:00:00.000Z');
    // The skipped 02:30 lands an hour later (03:30 CEST); the repeated 02:30 is its first occurrence (CEST).
    expect(new Date(instantOf('Europe/Berlin', 2026, 3, 29, 150)).toISOString()).toBe('2026-03-29T01:30:00.000Z');
    expect(new Date(instantOf('Europe/Berlin', 2026, 10, 25, 150)).toISOString()).toBe('2026-10-25T00:30:00.000Z');
    expect(new Date(instantOf('America/New_York', 2026, 11, 1, 24 * 60)).toISOString()).toBe(
      '2026-11-02T05:00:00.000Z',
    );
  });
});

describe('wasOpenBetween', () => {
  it('tells one closed period from the next', () => {
    // Monday 20:00 and Tuesday 07:00 (Lisbon, UTC+0 in March): one closed night.
    expect(wasOpenBetween(weekdays9to17, 'Europe/Lisbon', at('2026-03-02T20:00:00Z'), at('2026-03-03T07:00:00Z'))).toBe(
      false,
    );
    // Monday 20:00 and Tuesday 20:00: Tuesday's hours were in between.
    expect(wasOpenBetween(weekdays9to17, 'Europe/Lisbon', at('2026-03-02T20:00:00Z'), at('2026-03-03T20:00:00Z'))).toBe(
      true,
    );
    // Friday 18:00 to Monday 08:00: the weekend is one closed period.
    expect(wasOpenBetween(weekdays9to17, 'Europe/Lisbon', at('2026-03-06T18:00:00Z'), at('2026-03-09T08:00:00Z'))).toBe(
      false,
    );
    // Weeks apart.
    expect(wasOpenBetween(weekdays9to17, 'Europe/Lisbon', at('2026-03-06T18:00:00Z'), at('2026-04-06T08:00:00Z'))).toBe(
      true,
    );
    // Across Berlin's spring change: Sunday 20:00 CET to Monday 08:30 CEST (06:30 UTC) is still closed.
    expect(wasOpenBetween(weekdays9to17, 'Europe/Berlin', at('2026-03-29T19:00:00Z'), at('2026-03-30T06:30:00Z'))).toBe(
      false,
    );
    expect(wasOpenBetween(weekdays9to17, 'Europe/Berlin', at('2026-03-29T19:00:00Z'), at('2026-03-30T07:30:00Z'))).toBe(
      true,
    );
  });
});
