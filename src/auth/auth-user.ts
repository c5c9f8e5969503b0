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
}
