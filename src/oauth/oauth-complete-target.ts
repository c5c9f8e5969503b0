import { CONSOLE_OAUTH_COMPLETE_PATH, consoleIsBuilt } from '../console/serve-console.js';
import type { Settings } from '../config/settings.js';

/**
 * The page the OAuth callback sends the browser on to, or null when the callback shows the values
 * itself (a small page, or JSON). OAUTH_COMPLETE_URL wins; `none` turns the redirect off; unset, it
 * is the console's completion page, when this build has a console to serve it.
 */
export function oauthCompleteTarget(
  settings: Pick<Settings, 'oauthCompleteUrl' | 'publicBaseUrl'>,
  hasConsole: boolean = consoleIsBuilt(),
): string | null {
  if (settings.oauthCompleteUrl !== undefined) {
    return settings.oauthCompleteUrl;
  }
  return hasConsole ? `${settings.publicBaseUrl}${CONSOLE_OAUTH_COMPLETE_PATH}` : null;
}
