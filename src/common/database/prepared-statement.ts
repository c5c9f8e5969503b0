/**
 * A statement PostgreSQL parses and plans once per connection (a named prepared statement), for a
 * hot read whose planning costs more than its execution. pg prepares a query config that carries a
 * name on each connection the first time that connection runs it, and TypeORM's `query` hands the
 * config through to pg unchanged (its logger gets the config, see DatabaseLogger). The name must
 * stand for one text only.
 */
export function preparedStatement(name: string, text: string): string {
  // A fresh config per call: pg sets the call's values on the object it is given.
  return { name, text } as unknown as string;
}

/** The SQL text of a statement as TypeORM passes it around: a string, or a prepared statement's config. */
export function statementText(query: unknown): string {
  if (typeof query === 'object' && query !== null && typeof (query as { text?: unknown }).text === 'string') {
    return (query as { text: string }).text;
  }
  return String(query);
}
