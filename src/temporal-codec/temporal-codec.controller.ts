import {
  applyDecorators,
  Body,
  Controller,
  Get,
  Headers,
  HttpCode,
  HttpStatus,
  Inject,
  Options,
  Post,
  Res,
} from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiConsumes,
  ApiHeader,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { ApiReply } from '../common/http.js';
import { JwtService } from '@nestjs/jwt';
import { type AuthUser, type JwtClaims, TOKEN_AUDIENCES } from '../auth/auth-user.js';
import { AdminOnly, CurrentUser, Public, TokenAlsoFrom } from '../auth/decorators.js';
import { AUTH_ERRORS, ApiErrors } from '../common/api-errors.js';
import { AppError } from '../common/app-error.js';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { CodecPayloadsDto } from './dto/codec-payloads.dto.js';
import { CodecSessionDto } from './dto/codec-session.dto.js';
import { TemporalCodecService } from './temporal-codec.service.js';

/**
 * The cookie the Temporal UI sends (with "include cross-origin credentials"): a token minted for the
 * codec routes only (audience TOKEN_AUDIENCES.temporalCodec), never the admin's access token.
 */
export const CODEC_COOKIE = 'agentsite_codec';
/** The codec token's longest life; never past the access token it was minted from. */
export const CODEC_TOKEN_MAX_SECONDS = 3600;
export const CODEC_PATH = '/api/temporal-codec';
/** Largest request body of the codec routes (payloads of one event, base64 in JSON). */
export const MAX_CODEC_BODY_BYTES = 8 * 1024 * 1024;

const NAMESPACE_HEADER = {
  // Lower case, as @Headers() reads it: one parameter in the document, not two.
  name: 'x-namespace',
  required: false,
  description: 'The namespace of the payloads (sent by the Temporal UI and CLI); must be this service’s',
};
const CREDENTIALS =
  'Admins only: `Authorization: Bearer <admin token>` (the temporal CLI: `--codec-auth "Bearer <token>"`), or ' +
  `the \`${CODEC_COOKIE}\` cookie set by ${CODEC_PATH}/session (the Temporal UI with "include cross-origin credentials"), ` +
  'which holds a short-lived token that only these two routes accept.';

/** What the admin routes answer before their own code runs, and a body or namespace they refuse. */
const ADMIN_ERRORS = [...AUTH_ERRORS, 'ADMIN_REQUIRED', 'VALIDATION_ERROR'] as const;

/** A route of Temporal's codec protocol: admins only, by bearer token or by the UI's cookie. */
const CodecRoute = (path: 'decode' | 'encode'): MethodDecorator =>
  applyDecorators(
    Post(path),
    HttpCode(HttpStatus.OK),
    AdminOnly(),
    TokenAlsoFrom({ cookie: CODEC_COOKIE, audience: TOKEN_AUDIENCES.temporalCodec }),
    ApiBearerAuth(),
    ApiHeader(NAMESPACE_HEADER),
    ApiOkResponse({ type: CodecPayloadsDto }),
    ApiErrors(...ADMIN_ERRORS),
  );

/** The routes that answer an HTML page. */
const HTML_PAGE = { 'text/html': { schema: { type: 'string' as const } } };

const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const page = (title: string, body: string): string =>
  `<!doctype html><meta charset="utf-8"><title>${title}</title><style>body{font:16px system-ui;max-width:40em;margin:3em auto}</style>
<h1>${title}</h1>${body}`;

/**
 * Temporal's remote codec protocol over the service's payload codec, so operators read encrypted
 * runs in the Temporal UI and CLI. Decoding shows run data in clear, so it is for admins only.
 */
@ApiTags('temporal-codec')
@Controller('temporal-codec')
export class TemporalCodecController {
  private readonly tokens: JwtService;

  constructor(
    private readonly codec: TemporalCodecService,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {
    this.tokens = new JwtService({ secret: settings.jwtSecret, signOptions: { algorithm: 'HS256' } });
  }

  @CodecRoute('decode')
  @ApiOperation({
    summary: 'Decode (decrypt) Temporal payloads for an operator: the Temporal UI and CLI codec endpoint',
    description: `${CREDENTIALS} Payloads the codec did not encrypt come back unchanged; one that does not open (its key id is not in TEMPORAL_CODEC_KEY) answers VALIDATION_ERROR naming it.`,
  })
  decode(@Body() body: CodecPayloadsDto, @Headers('x-namespace') namespace?: string): Promise<CodecPayloadsDto> {
    this.checkNamespace(namespace);
    return this.codec.decode(body);
  }

  @CodecRoute('encode')
  @ApiOperation({
    summary: 'Encode (encrypt) payloads an operator sends from the Temporal UI or CLI (start, signal)',
    description: `${CREDENTIALS} Encrypted under the current TEMPORAL_CODEC_KEY, as the service writes payloads.`,
  })
  encode(@Body() body: CodecPayloadsDto, @Headers('x-namespace') namespace?: string): Promise<CodecPayloadsDto> {
    this.checkNamespace(namespace);
    return this.codec.encode(body);
  }

  /** CORS preflight of the Temporal UI (its origin is allowed by TEMPORAL_UI_ORIGIN; headers set by codecCors). */
  @Public()
  @Options(['decode', 'encode'])
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiErrors('VALIDATION_ERROR')
  @ApiNoContentResponse({ description: 'CORS preflight: allowed for the TEMPORAL_UI_ORIGIN origins' })
  @ApiOperation({ summary: 'CORS preflight for the Temporal UI' })
  @ApiErrors('RATE_LIMITED')
  preflight(): void {}

  /** The sign-in form for the Temporal UI (a browser page cannot send Authorization headers). */
  @Public()
  @Get('session')
  @ApiOperation({ summary: 'A form where an admin signs this browser in for the Temporal UI’s decoding' })
  @ApiOkResponse({ description: 'The sign-in form', content: HTML_PAGE })
  @ApiErrors('RATE_LIMITED', 'VALIDATION_ERROR')
  sessionForm(@Res() res: ApiReply): void {
    this.html(
      res,
      page(
        'Decode runs in the Temporal UI',
        `<p>Paste an admin's access token (<code>POST /api/auth/login</code>). This browser then keeps it in an
HttpOnly cookie, sent only to ${CODEC_PATH}, a token of its own that only decodes and encodes, for an hour at most.</p>
<form method="post"><input type="password" name="token" autocomplete="off" size="60" required> <button>Sign in</button></form>`,
      ),
    );
  }

  @Post('session')
  @HttpCode(HttpStatus.OK)
  @AdminOnly()
  @TokenAlsoFrom({ formField: 'token' })
  @ApiBearerAuth()
  @ApiConsumes('application/x-www-form-urlencoded', 'application/json')
  @ApiOperation({
    summary: `Sign this browser in for the Temporal UI: sets the ${CODEC_COOKIE} cookie (admins only)`,
    description:
      `The admin token comes as the form field \`token\` or as Authorization: Bearer. The cookie holds not that ` +
      `token but one minted from it that only the decode and encode routes accept, for ${CODEC_TOKEN_MAX_SECONDS / 60} minutes at ` +
      `most and never past the admin token's expiry (a logout of the admin token ends it too). It is HttpOnly, ` +
      `SameSite=Strict and limited to ${CODEC_PATH}.`,
  })
  @ApiOkResponse({ description: `A page saying so; the ${CODEC_COOKIE} cookie is set`, content: HTML_PAGE })
  @ApiErrors(...ADMIN_ERRORS)
  session(
    @CurrentUser() user: AuthUser,
    // Validated (the form's `token` field, read by the guard); the cookie's token is minted below.
    @Body() _body: CodecSessionDto,
    @Res() res: ApiReply,
  ): void {
    // Not the admin's token: one for the codec routes only, at most an hour, never past the admin's.
    // Its jti is the admin token's, so logging that token out (or out everywhere) ends it too.
    const now = Date.now();
    const maxAge = Math.max(
      0,
      Math.min(CODEC_TOKEN_MAX_SECONDS, Math.floor((user.token.expiresAt.getTime() - now) / 1000)),
    );
    const expiresAt = new Date(now + maxAge * 1000);
    const claims: JwtClaims = {
      sub: user.user.id,
      jti: user.token.jti,
      iatMs: now,
      aud: TOKEN_AUDIENCES.temporalCodec,
    };
    const token = this.tokens.sign(claims, { expiresIn: maxAge });
    const secure = this.settings.publicBaseUrl.startsWith('https:') ? '; Secure' : '';
    void res.header(
      'set-cookie',
      `${CODEC_COOKIE}=${token}; Max-Age=${maxAge}; Path=${CODEC_PATH}; HttpOnly; SameSite=Strict${secure}`,
    );
    this.html(
      res,
      page(
        'Signed in for the Temporal UI',
        `<p>Until ${expiresAt.toISOString()}. In the Temporal UI, open "Configure Codec Server", choose
"Use my browser setting and ignore Cluster-level setting", set the endpoint to <code>${escapeHtml(this.settings.publicBaseUrl + CODEC_PATH)}</code> and tick
"Include cross-origin credentials". Open the UI on the same host name as this page.</p>`,
      ),
    );
  }

  private checkNamespace(namespace: string | undefined): void {
    if (namespace !== undefined && namespace !== '' && namespace !== this.settings.temporalNamespace) {
      throw AppError.validation([
        {
          field: 'X-Namespace',
          message: `this service's payloads are in namespace "${this.settings.temporalNamespace}"`,
        },
      ]);
    }
  }

  private html(res: ApiReply, body: string): void {
    void res
      .code(200)
      .header('cache-control', 'no-store')
      .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'")
      .type('text/html; charset=utf-8')
      .send(body);
  }
}
