/**
 * Who is signed in: the user (/api/me), their workspaces and the active one. Every page reads it
 * through useSession(). The session itself is the service's HttpOnly cookie (see api/client.ts).
 */
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useState } from 'react';
import { api, credentials, type Schemas, unwrap, whenSignedOut } from '../api/client';

export type Me = Schemas['UserResponseDto'];
export type Workspace = Schemas['WorkspaceResponseDto'];

interface SessionValue {
  /** undefined while the first /api/me is on its way. */
  me: Me | null | undefined;
  workspaces: Workspace[];
  /** The workspace the console acts in (X-Workspace-Id), or null for the user's own account. */
  workspaceId: string | null;
  /** Why the last session ended on its own (expired, revoked), for the sign-in page. */
  endedBecause: string | null;
  /** After the console's sign-in or registration, which set the session cookies. */
  signIn: (me: Me) => void;
  signOut: (everywhere?: boolean) => Promise<void>;
  refreshMe: () => Promise<void>;
  refreshWorkspaces: () => Promise<void>;
  switchWorkspace: (id: string | null) => void;
}

const SessionContext = createContext<SessionValue | null>(null);

export function SessionProvider({ children }: { children: ReactNode }) {
  const [me, setMe] = useState<Me | null | undefined>(credentials.signedIn() ? undefined : null);
  const [workspaces, setWorkspaces] = useState<Workspace[]>([]);
  const [workspaceId, setWorkspaceId] = useState<string | null>(credentials.workspace());
  const [endedBecause, setEndedBecause] = useState<string | null>(null);

  const refreshMe = useCallback(async () => {
    if (!credentials.signedIn()) {
      setMe(null);
      return;
    }
    try {
      setMe(await unwrap(api.GET('/api/me')));
    } catch {
      // A 401 already signed out through the client; anything else leaves the user as they were.
      if (!credentials.signedIn()) {
        setMe(null);
      }
    }
  }, []);

  const refreshWorkspaces = useCallback(async () => {
    if (!credentials.signedIn()) {
      setWorkspaces([]);
      return;
    }
    try {
      // A workspace the user left answers WORKSPACE_NOT_FOUND: the client then drops it; list again.
      const list = await unwrap(api.GET('/api/workspaces')).catch(() => unwrap(api.GET('/api/workspaces')));
      setWorkspaces(list.items);
      const active = credentials.workspace();
      if (active !== null && !list.items.some((w) => w.id === active)) {
        credentials.setWorkspace(null);
        setWorkspaceId(null);
      }
    } catch {
      setWorkspaces([]);
    }
  }, []);

  useEffect(() => {
    whenSignedOut((reason) => {
      setEndedBecause(reason);
      setMe(null);
      setWorkspaces([]);
    });
    void refreshMe();
    void refreshWorkspaces();
  }, [refreshMe, refreshWorkspaces]);

  const signIn = useCallback(
    (user: Me) => {
      credentials.setWorkspace(null);
      setWorkspaceId(null);
      setEndedBecause(null);
      setMe(user);
      if (user.acceptedTermsAt !== null) {
        void refreshWorkspaces();
      }
    },
    [refreshWorkspaces],
  );

  const signOut = useCallback(async (everywhere = false) => {
    try {
      await unwrap(api.POST(everywhere ? '/api/auth/logout-all' : '/api/auth/logout'));
    } finally {
      credentials.forget();
      credentials.setWorkspace(null);
      setWorkspaceId(null);
      setMe(null);
      setWorkspaces([]);
    }
  }, []);

  const switchWorkspace = useCallback((id: string | null) => {
    credentials.setWorkspace(id);
    setWorkspaceId(id);
  }, []);

  const value = useMemo(
    () => ({
      me,
      workspaces,
      workspaceId,
      endedBecause,
      signIn,
      signOut,
      refreshMe,
      refreshWorkspaces,
      switchWorkspace,
    }),
    [me, workspaces, workspaceId, endedBecause, signIn, signOut, refreshMe, refreshWorkspaces, switchWorkspace],
  );
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionValue {
  const value = useContext(SessionContext);
  if (value === null) {
    throw new Error('useSession outside <SessionProvider>');
  }
  return value;
}
