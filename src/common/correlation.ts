import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

export const CORRELATION_HEADER = 'x-correlation-id';

const SAFE_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/** Gives every request a correlation id (the caller's, when it is sane) and echoes it in the answer. */
export function correlationMiddleware(req: Request, res: Response, next: NextFunction): void {
  const incoming = req.headers[CORRELATION_HEADER];
  const id = typeof incoming === 'string' && SAFE_ID.test(incoming) ? incoming : randomUUID();
  (req as RequestWithCorrelation).correlationId = id;
  res.setHeader(CORRELATION_HEADER, id);
  next();
}

export interface RequestWithCorrelation extends Request {
  correlationId?: string;
}

export function correlationIdOf(req: Request): string {
  return (req as RequestWithCorrelation).correlationId ?? 'none';
}
