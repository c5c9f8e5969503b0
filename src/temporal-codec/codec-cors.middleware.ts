import { Inject, Injectable, type NestMiddleware } from '@nestjs/common';
import { type AnyRequest, type Next, type NodeRequest, type NodeResponse, vary } from '../common/http.js';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';

/** How long a browser may reuse a preflight answer, in seconds. */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * CORS for the codec routes, which the Temporal UI calls from its own origin: only the origins in
 * TEMPORAL_UI_ORIGIN are answered, with credentials (the codec cookie) allowed. Set before the guards
 * run, so a refusal (401, 403) reaches the UI as such instead of as a CORS failure.
 */
@Injectable()
export class CodecCorsMiddleware implements NestMiddleware {
  constructor(@Inject(SETTINGS) private readonly settings: Settings) {}

  use(req: NodeRequest, res: NodeResponse, next: Next): void {
    setCodecCorsHeaders(this.settings, req, res);
    next();
  }
}

/** The CORS headers of a codec route's answer (also set before the body is read: see codecBodyParser). */
export function setCodecCorsHeaders(
  settings: Pick<Settings, 'temporalUiOrigins'>,
  req: AnyRequest,
  res: NodeResponse,
): void {
  const origin = req.headers.origin;
  vary(res, 'Origin');
  if (typeof origin === 'string' && settings.temporalUiOrigins.includes(origin)) {
    res.setHeader('access-control-allow-origin', origin);
    res.setHeader('access-control-allow-credentials', 'true');
    if (req.method === 'OPTIONS') {
      res.setHeader('access-control-allow-methods', 'POST, OPTIONS');
      res.setHeader('access-control-allow-headers', 'content-type, x-namespace, authorization');
      res.setHeader('access-control-max-age', String(PREFLIGHT_MAX_AGE_SECONDS));
    }
  }
}
