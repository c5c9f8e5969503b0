/** Longest wait for a pooled connection (pg-pool `connectionTimeoutMillis`): past it the query fails. */
export const DB_CONNECT_TIMEOUT_MS = 5_000;
/** Longest a single query may run (pg `query_timeout`): an API query never waits forever on a dead database. */
export const DB_QUERY_TIMEOUT_MS = 15_000;
