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
