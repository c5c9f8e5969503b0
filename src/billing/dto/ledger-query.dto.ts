import { LEDGER_CURSOR } from '../../credits/ledger-entry.js';
import { CursorParam, LimitParam } from '../../common/pagination.js';

/** GET /billing/ledger's query: the ledger pages by entry id, so its cursor is one. */
export class LedgerQueryDto {
  @LimitParam()
  limit?: number;

  @CursorParam(LEDGER_CURSOR)
  cursor?: string;
}
