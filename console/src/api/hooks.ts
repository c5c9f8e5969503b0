import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError } from './client';

function asApiError(err: unknown): ApiError {
  return err instanceof ApiError ? err : new ApiError({ error: String(err), code: 'INTERNAL_ERROR' }, undefined);
}

export interface Loaded<T> {
  data: T | undefined;
  error: ApiError | undefined;
  loading: boolean;
  reload: () => Promise<void>;
}

/** Loads data on mount and whenever `deps` change; `reload()` fetches again (keeping the old data meanwhile). */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<ApiError>();
  const [loading, setLoading] = useState(true);
  const latest = useRef(load);
  latest.current = load;
  const generation = useRef(0);

  const reload = useCallback(async () => {
    const mine = ++generation.current;
    setLoading(true);
    try {
      const value = await latest.current();
      if (mine === generation.current) {
        setData(value);
        setError(undefined);
      }
    } catch (err) {
      if (mine === generation.current) {
        setError(asApiError(err));
      }
    } finally {
      if (mine === generation.current) {
        setLoading(false);
      }
    }
  }, []);

  useEffect(() => {
    void reload();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);

  return { data, error, loading, reload };
}

export interface Action<A extends unknown[], T> {
  run: (...args: A) => Promise<T | undefined>;
  busy: boolean;
  error: ApiError | undefined;
  clearError: () => void;
}

/**
 * A user action (a form's submit, a button): `busy` while it runs, `error` with the API's answer
 * when it fails (shown next to the control by <ErrorNote>). `run` resolves to undefined on failure.
 */
export function useAction<A extends unknown[], T>(act: (...args: A) => Promise<T>): Action<A, T> {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError>();
  const latest = useRef(act);
  latest.current = act;
  const run = useCallback(async (...args: A) => {
    setBusy(true);
    setError(undefined);
    try {
      return await latest.current(...args);
    } catch (err) {
      setError(asApiError(err));
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);
  const clearError = useCallback(() => setError(undefined), []);
  return { run, busy, error, clearError };
}
