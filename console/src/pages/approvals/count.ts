/**
 * The number of approvals waiting, for the navigation's badge: one small GET (a page of COUNT_PAGE;
 * a full page with more behind it reads "20+"), again when the page changes, every 30 s, and when a
 * decision was taken anywhere in the console.
 */
import { useCallback, useEffect, useState } from 'react';
import { useLocation } from 'react-router';
import { api, unwrap } from '../../api/client';
import { useSession } from '../../session/session';

export const COUNT_PAGE = 20;
const EVERY_MS = 30_000;

const listeners = new Set<() => void>();

/** Tells the badge to count again (a decision was taken). */
export function approvalsChanged(): void {
  for (const listener of listeners) {
    listener();
  }
}

export interface WaitingCount {
  count: number;
  /** More than the page holds. */
  more: boolean;
}

/** The count as the badge writes it ("3", "20+"), and its accessible name ("3 approvals waiting"). */
export function countWords({ count, more }: WaitingCount): { text: string; name: string } {
  const text = more ? `${count}+` : String(count);
  return { text, name: `${more ? `more than ${count}` : count} approval${count === 1 && !more ? '' : 's'} waiting` };
}

export function useWaitingCount(): WaitingCount | undefined {
  const { me, workspaceId } = useSession();
  const location = useLocation();
  const [waiting, setWaiting] = useState<WaitingCount>();
  const ready = me !== undefined && me !== null && me.acceptedTermsAt !== null;

  const count = useCallback(async () => {
    try {
      const page = await unwrap(
        api.GET('/api/approvals', { params: { query: { status: 'pending', limit: COUNT_PAGE } } }),
      );
      setWaiting({ count: page.items.length, more: page.nextCursor !== null });
    } catch {
      // The badge is a hint: a failed count keeps the last one (the inbox itself says what failed).
    }
  }, []);

  useEffect(() => {
    if (!ready) {
      setWaiting(undefined);
      return undefined;
    }
    void count();
    const timer = setInterval(() => void count(), EVERY_MS);
    listeners.add(count);
    return () => {
      clearInterval(timer);
      listeners.delete(count);
    };
  }, [ready, workspaceId, location.pathname, count]);

  return waiting;
}
