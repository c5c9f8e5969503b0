/**
 * A migration that would lose data refuses instead: its transaction is rolled back, nothing is marked
 * applied, and the process stops with this message (what is wrong and what the operator must do).
 */
export class MigrationRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MigrationRefusedError';
  }
}
