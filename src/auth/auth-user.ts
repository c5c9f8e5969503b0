import type { UserEntity } from '../users/user.entity.js';

/** What the JWT guard puts on the request: the user as loaded for this request, and the token used. */
export interface AuthUser {
  user: UserEntity;
  isAdmin: boolean;
  token: { jti: string; expiresAt: Date };
}

/** The claims our JWTs carry. `iatMs` has millisecond precision so logout-all cuts exactly at its instant. */
export interface JwtClaims {
  sub: string;
  jti: string;
  iatMs: number;
  iat?: number;
  exp?: number;
  /** Only on tokens minted for one use (see TOKEN_AUDIENCES); an access token has none. */
  aud?: string;
}

/** The audiences of the service's narrow tokens: each is accepted only by the routes that name it. */
export const TOKEN_AUDIENCES = {
  /** The Temporal UI's codec cookie: /api/temporal-codec/decode and /encode only. */
  temporalCodec: 'agentsite:temporal-codec',
} as const;
