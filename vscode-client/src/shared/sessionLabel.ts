/**
 * A session's line in the panel's session picker: its title on one line
 * (whitespace collapsed, at most 60 characters), then ` · ` and when it was
 * last used only when both are there: never a dangling separator. Pure.
 */

import type { SessionSummary } from './protocol';

const MAX_TITLE = 60;

export function sessionLabel(session: Pick<SessionSummary, 'id' | 'title' | 'updatedAt'>, locale?: string): string {
  const flat = session.title.replace(/\s+/g, ' ').trim().replace(/[\s·:,;–-]+$/u, '');
  const title = flat.length > MAX_TITLE ? `${flat.slice(0, MAX_TITLE - 1).trimEnd()}\u2026` : flat;
  const raw = session.updatedAt;
  const when = typeof raw === 'number' ? new Date(raw < 1e12 ? raw * 1000 : raw) : raw ? new Date(raw) : undefined;
  const stamp = when && !Number.isNaN(when.getTime()) ? when.toLocaleString(locale, { dateStyle: 'short', timeStyle: 'short' }) : '';
  return [title || session.id, stamp].filter(Boolean).join(' · ');
}
