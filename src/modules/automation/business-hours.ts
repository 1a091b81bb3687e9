// decisions §20: the organization's week of opening hours, in its timezone. Pure functions over instants: the local
// weekday and time of an instant come from Intl (the IANA database Node carries, DST included), so nothing here
// does its own calendar arithmetic beyond finding the instant of a local time on a given date.

export const WEEK_DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type WeekDay = (typeof WEEK_DAYS)[number];

export interface OpeningInterval {
  day: WeekDay;
  /** "HH:MM", local time. */
  open: string;
  /** "HH:MM" after `open` ("24:00": until midnight). */
  close: string;
}

export interface BusinessHours {
  enabled: boolean;
  week: OpeningInterval[];
}

/** Minutes since midnight of "HH:MM". */
export const minutesOf = (time: string): number => Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5));

const DAY_MS = 24 * 60 * 60 * 1000;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timezone: string): Intl.DateTimeFormat {
  let found = formatters.get(timezone);
  if (!found) {
    found = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      weekday: 'short',
    });
    formatters.set(timezone, found);
  }
  return found;
}

interface LocalTime {
  year: number;
  month: number;
  day: number;
  weekday: WeekDay;
  /** Minutes since local midnight. */
  minutes: number;
  seconds: number;
}

/** The wall-clock date, weekday and time of `instant` in `timezone`. */
export function localTime(timezone: string, instant: Date): LocalTime {
  const parts: Record<string, string> = {};
  for (const part of formatter(timezone).formatToParts(instant)) parts[part.type] = part.value;
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    weekday: (parts.weekday ?? 'Mon').toLowerCase().slice(0, 3) as WeekDay,
    minutes: Number(parts.hour) * 60 + Number(parts.minute),
    seconds: Number(parts.second),
  };
}

/** The zone's offset from UTC at `epochMs`, in milliseconds. */
function offsetAt(timezone: string, epochMs: number): number {
  const local = localTime(timezone, new Date(epochMs));
  const asUtc = Date.UTC(local.year, local.month - 1, local.day, 0, local.minutes, local.seconds);
  return asUtc - Math.floor(epochMs / 1000) * 1000;
}

/**
 * The instant of local `minutes` on a local date. A time skipped by a DST change (02:30 on the spring-forward
 * night) lands an hour later; a time that happens twice (the autumn night) is its first occurrence.
 */
export function instantOf(timezone: string, year: number, month: number, day: number, minutes: number): number {
  const wall = Date.UTC(year, month - 1, day, 0, minutes);
  // The zone's offsets a day before and a day after (a change happens at most once in between) give the candidates.
  const candidates = [wall - offsetAt(timezone, wall - DAY_MS), wall - offsetAt(timezone, wall + DAY_MS)];
  // Across a change the two offsets give two candidates: the earlier one that shows this wall time; in a gap neither
  // shows it, and the later one (the wall time pushed forward by the change) is taken.
  const showing = candidates.filter((at) => offsetAt(timezone, at) === wall - at);
  return showing.length > 0 ? Math.min(...showing) : Math.max(...candidates);
}

/** decisions §20: whether the organization is open at `instant`; while business hours are disabled it always is. */
export function isOpenAt(hours: BusinessHours, timezone: string, instant: Date): boolean {
  if (!hours.enabled) return true;
  const local = localTime(timezone, instant);
  return hours.week.some(
    (interval) =>
      interval.day === local.weekday &&
      minutesOf(interval.open) <= local.minutes &&
      local.minutes < minutesOf(interval.close),
  );
}

/**
 * Whether the organization was open at some moment after `from` up to `to`: an away message sent at `from` was in
 * another closed period than a message at `to` exactly when it was. Disabled hours are always open.
 */
export function wasOpenBetween(hours: BusinessHours, timezone: string, from: Date, to: Date): boolean {
  if (!hours.enabled) return true;
  if (hours.week.length === 0 || to.getTime() <= from.getTime()) return false;
  // A week and more apart: every listed interval happened in between.
  if (to.getTime() - from.getTime() > 8 * DAY_MS) return true;
  const start = localTime(timezone, from);
  // Each local date from `from`'s to `to`'s (noon UTC of the date steps safely across DST days).
  for (let cursor = Date.UTC(start.year, start.month - 1, start.day, 12); ; cursor += DAY_MS) {
    const date = new Date(cursor);
    const [year, month, day] = [date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate()];
    const weekday = WEEK_DAYS[(date.getUTCDay() + 6) % 7] as WeekDay;
    for (const interval of hours.week) {
      if (interval.day !== weekday) continue;
      const opens = instantOf(timezone, year, month, day, minutesOf(interval.open));
      const closes = instantOf(timezone, year, month, day, minutesOf(interval.close));
      if (opens < closes && opens <= to.getTime() && closes > from.getTime()) return true;
    }
    if (instantOf(timezone, year, month, day, 0) > to.getTime()) return false;
  }
}
