// Times for people. Pure: no I/O, no imports from src/.
// Tested in test/format/numbers.test.ts.

/** `just now`, `42 s ago`, `3 min ago`, `5 h ago`, `2 days ago`, then the date (JSON keeps ISO times). */
export function relativeTime(iso: string | null | undefined, now: number): string {
  if (!iso) return '—';
  const seconds = Math.round((now - Date.parse(iso)) / 1000);
  if (Number.isNaN(seconds)) return '—';
  if (seconds < 5) return 'just now';
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`;
  const days = Math.floor(seconds / 86_400);
  return days < 60 ? `${days} day${days === 1 ? '' : 's'} ago` : iso.slice(0, 10);
}

/** An ISO time as `2025-01-31 14:05:09` (UTC when the ISO time is). */
export function shortTime(iso: string): string {
  return iso.replace('T', ' ').slice(0, 19);
}
