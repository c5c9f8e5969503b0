import { Global, Injectable, Module } from '@nestjs/common';
import type { Request } from 'express';

/** Starts a read a route will need, for a user whose token signature has just been checked. */
export type Prefetcher = (req: Request, userId: string) => void;

/**
 * Reads that a route needs anyway, started while the rest of authentication (the user's row, the
 * rate limits) is still under way, instead of after it: a chat turn's session and messages. Only
 * for a token whose signature is valid, and the route uses the result only for that same user once
 * every guard has passed; a request that fails a guard just drops it.
 */
@Injectable()
export class AuthenticatedPrefetch {
  private readonly prefetchers: Prefetcher[] = [];

  register(prefetcher: Prefetcher): void {
    this.prefetchers.push(prefetcher);
  }

  start(req: Request, userId: string): void {
    for (const prefetch of this.prefetchers) {
      prefetch(req, userId);
    }
  }
}

@Global()
@Module({ providers: [AuthenticatedPrefetch], exports: [AuthenticatedPrefetch] })
export class PrefetchModule {}
