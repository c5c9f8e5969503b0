import { routeTemplate as accessLogRoute } from '../common/access-log.js';
import { type Next, type NodeMiddleware, type NodeRequest, type NodeResponse, fullPathOf } from '../common/http.js';
import { answeredErrorCode } from '../common/error-filter.js';
import type { MetricsService } from './metrics.service.js';

/** The route label of a request no route took: console files, unknown paths, bodies refused before routing. */
export const NO_ROUTE = '(none)';
/** The webhook route's template, as declared. */
export const WEBHOOK_ROUTE = '/api/webhooks/agent/:agentId';

/**
 * The template of the route that answered (`/api/agents/:id`), never the raw path: one series per
 * route. The access log's reading of it, so a log line and a series name the same route.
 */
export function routeTemplate(req: NodeRequest): string {
  return accessLogRoute(req) ?? NO_ROUTE;
}

/**
 * Whether the request was a webhook delivery: the webhook route, or a body the parsers refused on its
 * path before any route was matched (app.factory answers those WEBHOOK_PAYLOAD_INVALID).
 */
function isWebhookDelivery(req: NodeRequest, route: string, code: string | undefined): boolean {
  if (req.method !== 'POST') {
    return false;
  }
  return (
    route === WEBHOOK_ROUTE ||
    (route === NO_ROUTE &&
      code === 'WEBHOOK_PAYLOAD_INVALID' &&
      fullPathOf(req).toLowerCase().startsWith('/api/webhooks/'))
  );
}

/**
 * Times every request of the API (mounted before the body parsers, so refused bodies count too) and
 * counts webhook deliveries by outcome: observed when the answer has been sent.
 */
export function httpMetricsMiddleware(metrics: MetricsService): NodeMiddleware {
  return (req: NodeRequest, res: NodeResponse, next: Next): void => {
    const started = performance.now();
    res.once('finish', () => {
      const route = routeTemplate(req);
      const status = String(res.statusCode);
      metrics.httpDuration.observe({ method: req.method, route, status }, (performance.now() - started) / 1000);
      const code = answeredErrorCode(res);
      if (isWebhookDelivery(req, route, code)) {
        const accepted = res.statusCode === 202;
        metrics.webhookDeliveries.inc({
          outcome: accepted ? 'accepted' : 'refused',
          code: accepted ? 'none' : (code ?? `HTTP_${status}`),
        });
      }
    });
    next();
  };
}
