// The console's times (decisions §17): a wall-clock time typed for the organization's timezone becomes the right
// instant whatever the machine's own zone is, across clock changes.
import { describe, expect, it } from 'vitest';
import { formatTime, utcToZonedInput, zonedToUtc } from '../../../console/src/ui/time.ts';

describe('zonedToUtc', () => {
  it('reads the time in the named zone, not the machine’s', () => {
    expect(zonedToUtc('2026-11-27T09:30', 'America/Mexico_City')).toBe('2026-11-27T15:30:00.000Z');
    expect(zonedToUtc('2026-07-01T12:00', 'Asia/Kolkata')).toBe('2026-07-01T06:30:00.000Z');
    expect(zonedToUtc('2026-07-01T12:00', 'UTC')).toBe('2026-07-01T12:00:00.000Z');
    expect(zonedToUtc('2026-01-15T00:15', 'Pacific/Auckland')).toBe('2026-01-14T11:15:00.000Z');
  });

  it('follows summer time, and moves a time a clock change skips forward', () => {
    expect(zonedToUtc('2026-07-01T09:00', 'Europe/Berlin')).toBe('2026-07-01T07:00:00.000Z');
    expect(zonedToUtc('2026-01-01T09:00', 'Europe/Berlin')).toBe('2026-01-01T08:00:00.000Z');
    // 02:30 does not exist in Berlin on 29 March 2026: it is 03:30 summer time.
    expect(zonedToUtc('2026-03-29T02:30', 'Europe/Berlin')).toBe('2026-03-29T01:30:00.000Z');
    expect(zonedToUtc('2026-03-08T02:30', 'America/New_York')).toBe('2026-03-08T07:30:00.000Z');
    // 02:30 happens twice in Berlin on 25 October 2026: the first time (summer time).
    expect(zonedToUtc('2026-10-25T02:30', 'Europe/Berlin')).toBe('2026-10-25T00:30:00.000Z');
    expect(zonedToUtc('2026-11-01T01:30', 'America/New_York')).toBe('2026-11-01T05:30:00.000Z');
  });

  it('round-trips with utcToZonedInput and formatTime', () => {
    const instant = zonedToUtc('2026-11-27T09:30', 'America/Mexico_City')!;
    expect(utcToZonedInput(new Date(instant), 'America/Mexico_City')).toBe('2026-11-27T09:30');
    expect(formatTime(instant, 'America/Mexico_City')).toBe('27 Nov 2026, 09:30');
  });

  it('answers undefined for what is not a date and time', () => {
    for (const value of ['', '2026-11-27', '2026-11-27 09:30', 'tomorrow'])
      expect(zonedToUtc(value, 'UTC')).toBeUndefined();
  });
});
