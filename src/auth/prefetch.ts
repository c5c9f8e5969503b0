import { Global, Injectable, Module, SetMetadata } from '@nestjs/common';
import type { AnyRequest, ApiRequest } from '../common/http.js';

/** Starts a read a route will need, for a user whose token signature has just been checked. */
export type Prefetcher = (req: ApiRequest, userId: string) => void;

/** Route metadata: the key of the prefetcher the route declares (see PrefetchOnAuth). */
export const PREFETCH_ON_AUTH = Symbol('prefetchOnAuth');

/** Where the auth guard leaves the matched route's prefetcher key for the JWT strategy. */
const ROUTE_PREFETCH = Symbol('routePrefetch');

type PrefetchRequest = ApiRequest & { [ROUTE_PREFETCH]?: symbol };

/**
 * The route's reads start while authentication is still under way (see AuthenticatedPrefetch). The
 * route that matched decides, not the request's path; the feature registers the prefetcher under `key`.
 */
export const PrefetchOnAuth = (key: symbol): MethodDecorator => SetMetadata(PREFETCH_ON_AUTH, key);

/**
 * Reads that a route needs anyway, started while the rest of authentication (the user's row, the
 * rate limits) is still under way, instead of after it: a chat turn's session and messages. Only
 * for a token whose signature is valid, and the route uses the result only for that same user once
 * every guard has passed; a request that fails a guard just drops it.
 */
@Injectable()
export class AuthenticatedPrefetch {
  private readonly prefetchers = new Map<symbol, Prefetcher>();

  register(key: symbol, prefetcher: Prefetcher): void {
    this.prefetchers.set(key, prefetcher);
  }

  /** Called by the auth guard with the matched route's metadata (undefined: the route declares none). */
  forRoute(req: ApiRequest, key: symbol | undefined): void {
    if (key !== undefined) {
      (req as PrefetchRequest)[ROUTE_PREFETCH] = key;
    }
  }

  /** Called by the JWT strategy once the signature is checked: the route's prefetcher, if any. */
  start(req: AnyRequest, userId: string): void {
    const key = (req as PrefetchRequest)[ROUTE_PREFETCH];
    if (key !== undefined) {
      // Only a route's request (a Fastify request) has a prefetch key.
      this.prefetchers.get(key)?.(req as ApiRequest, userId);
    }
  }
}

@Global()
@Module({ providers: [AuthenticatedPrefetch], exports: [AuthenticatedPrefetch] })
export class PrefetchModule {}
