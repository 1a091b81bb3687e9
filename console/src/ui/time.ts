// Times in the organization's timezone (decisions §17), whatever the browser's own zone is.
const formats = new Map<string, Intl.DateTimeFormat>();

export function formatTime(iso: string | null | undefined, timeZone: string): string {
  if (!iso) return '—';
  let format = formats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-GB', { timeZone, dateStyle: 'medium', timeStyle: 'short' });
    formats.set(timeZone, format);
  }
  return format.format(new Date(iso));
}

const partFormats = new Map<string, Intl.DateTimeFormat>();

/** The wall-clock fields of an instant in `timeZone`, as milliseconds of a UTC date with those fields. */
function wallClock(instant: number, timeZone: string): number {
  let format = partFormats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    partFormats.set(timeZone, format);
  }
  const part = Object.fromEntries(format.formatToParts(new Date(instant)).map((p) => [p.type, p.value]));
  return Date.UTC(
    Number(part.year),
    Number(part.month) - 1,
    Number(part.day),
    Number(part.hour),
    Number(part.minute),
    Number(part.second),
  );
}

/**
 * The instant (ISO 8601, UTC) at which the clocks of `timeZone` show `local` (`YYYY-MM-DDTHH:mm`, as a
 * `datetime-local` input gives it), or `undefined` when `local` is not such a value. As Temporal's "compatible"
 * choice: a time shown twice (clocks going back) is the earlier one; a time a clock change skips moves forward by the
 * change (02:30 on a spring-forward night is 03:30).
 */
export function zonedToUtc(local: string, timeZone: string): string | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})$/.exec(local);
  if (!match) return undefined;
  const [, y, mo, d, h, mi] = match.map(Number) as [number, number, number, number, number, number];
  const wanted = Date.UTC(y, mo - 1, d, h, mi);
  // The zone's offsets half a day either side: any clock change near `wanted` lies between them.
  const offsetAt = (instant: number) => wallClock(instant, timeZone) - instant;
  const before = offsetAt(wanted - 12 * 3_600_000);
  const after = offsetAt(wanted + 12 * 3_600_000);
  const shown = [wanted - before, wanted - after].filter((instant) => wallClock(instant, timeZone) === wanted);
  const instant = shown.length > 0 ? Math.min(...shown) : wanted - before;
  return new Date(instant).toISOString();
}

/** The `YYYY-MM-DDTHH:mm` that the clocks of `timeZone` show at `instant` (for a `datetime-local` input's bounds). */
export function utcToZonedInput(instant: Date, timeZone: string): string {
  return new Date(wallClock(instant.getTime(), timeZone)).toISOString().slice(0, 16);
}
