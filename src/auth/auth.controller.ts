import { Body, Controller, Get, HttpCode, HttpStatus, Ip, Post, Req, Res } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { ApiReply, ApiRequest } from '../common/http.js';
import { AUTH_ERRORS, ApiErrors } from '../common/api-errors.js';
import { UserResponseDto } from '../users/dto/user-response.dto.js';
import { UsersService } from '../users/users.service.js';
import type { AuthUser } from './auth-user.js';
import { AuthService, type SessionAnswer } from './auth.service.js';
import { COOKIE_SESSION, ConsoleSessions, CSRF_COOKIE, CSRF_HEADER_NAME, SESSION_COOKIE } from './console-session.js';
import { CurrentUser, Public } from './decorators.js';
import { AcceptTermsResponseDto, ConsoleSessionResponseDto, SessionResponseDto } from './dto/auth-responses.dto.js';
import { AcceptTermsDto, LoginDto, RegisterDto } from './dto/auth.dto.js';

const CONSOLE_SESSION =
  `For the web console, same-origin. The answer sets two cookies that last as long as the token: ` +
  `\`${SESSION_COOKIE}\` (the access token; HttpOnly, SameSite=Strict, Path=/api, Secure when PUBLIC_BASE_URL is https) ` +
  `and \`${CSRF_COOKIE}\` (SameSite=Strict, readable by the console's script). Without an Authorization header, ` +
  `every authenticated route then takes the session cookie; a request other than GET, HEAD or OPTIONS must also ` +
  `carry the \`${CSRF_COOKIE}\` cookie's value in \`${CSRF_HEADER_NAME}\`, else PERMISSION_DENIED. ` +
  `API clients use register and login with Authorization: Bearer, which needs no CSRF token.`;

@ApiTags('auth')
@Controller('auth')
export class AuthController {
  constructor(
    private readonly auth: AuthService,
    private readonly consoleSessions: ConsoleSessions,
  ) {}

  @Public()
  @Post('register')
  @ApiOperation({ summary: 'Create an account; answers a JWT (RATE_LIMITED past the sign-in limits)' })
  @ApiCreatedResponse({ type: SessionResponseDto })
  @ApiErrors('VALIDATION_ERROR', 'RATE_LIMITED')
  register(@Body() body: RegisterDto, @Ip() address: string | undefined): Promise<SessionResponseDto> {
    return this.auth.register(body, address ?? 'unknown');
  }

  @Public()
  @Post('login')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary: 'Log in; answers a JWT (UNAUTHORIZED on wrong credentials, RATE_LIMITED past the sign-in limits)',
  })
  @ApiOkResponse({ type: SessionResponseDto })
  @ApiErrors('VALIDATION_ERROR', 'UNAUTHORIZED', 'RATE_LIMITED')
  login(@Body() body: LoginDto, @Ip() address: string | undefined): Promise<SessionResponseDto> {
    return this.auth.login(body, address ?? 'unknown');
  }

  @Public()
  @Post('console/register')
  @ApiOperation({
    summary: `The console's registration: as register, but the token goes into the ${SESSION_COOKIE} cookie`,
    description: CONSOLE_SESSION,
  })
  @ApiCreatedResponse({ type: ConsoleSessionResponseDto })
  @ApiErrors('VALIDATION_ERROR', 'RATE_LIMITED')
  async consoleRegister(
    @Body() body: RegisterDto,
    @Ip() address: string | undefined,
    @Res({ passthrough: true }) res: ApiReply,
  ): Promise<ConsoleSessionResponseDto> {
    return this.startConsoleSession(res, await this.auth.register(body, address ?? 'unknown'));
  }

  @Public()
  @Post('console/login')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary: `The console's sign-in: as login, but the token goes into the ${SESSION_COOKIE} cookie`,
    description: CONSOLE_SESSION,
  })
  @ApiOkResponse({ type: ConsoleSessionResponseDto })
  @ApiErrors('VALIDATION_ERROR', 'UNAUTHORIZED', 'RATE_LIMITED')
  async consoleLogin(
    @Body() body: LoginDto,
    @Ip() address: string | undefined,
    @Res({ passthrough: true }) res: ApiReply,
  ): Promise<ConsoleSessionResponseDto> {
    return this.startConsoleSession(res, await this.auth.login(body, address ?? 'unknown'));
  }

  @Post('logout')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiBearerAuth()
  @ApiOperation({
    summary: 'Revoke the token of this request',
    description: `Signed in by the console's cookie: the cookies are removed too.`,
  })
  @ApiNoContentResponse({ description: 'The token is revoked' })
  @ApiErrors(...AUTH_ERRORS, 'VALIDATION_ERROR')
  async logout(
    @CurrentUser() user: AuthUser,
    @Req() req: ApiRequest,
    @Res({ passthrough: true }) res: ApiReply,
  ): Promise<void> {
    await this.auth.logout(user);
    this.endConsoleSession(req, res);
  }

  @Post('logout-all')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiBearerAuth()
  @ApiOperation({
    summary: 'Revoke every token of the user issued before now (all devices)',
    description: `Signed in by the console's cookie: the cookies are removed too.`,
  })
  @ApiNoContentResponse({ description: 'Every token issued until now is revoked' })
  @ApiErrors(...AUTH_ERRORS, 'VALIDATION_ERROR')
  async logoutAll(
    @CurrentUser() user: AuthUser,
    @Req() req: ApiRequest,
    @Res({ passthrough: true }) res: ApiReply,
  ): Promise<void> {
    await this.auth.logoutAll(user);
    this.endConsoleSession(req, res);
  }

  @Post('accept-terms')
  @HttpCode(HttpStatus.OK)
  @ApiBearerAuth()
  @ApiOperation({
    summary: 'Accept the terms of service (needed by vault, sessions, agents, runs, workspaces, billing)',
  })
  @ApiOkResponse({ type: AcceptTermsResponseDto })
  @ApiErrors(...AUTH_ERRORS, 'VALIDATION_ERROR')
  acceptTerms(@CurrentUser() user: AuthUser, @Body() body: AcceptTermsDto): Promise<AcceptTermsResponseDto> {
    return this.auth.acceptTerms(user, body.version);
  }

  private startConsoleSession(res: ApiReply, session: SessionAnswer): ConsoleSessionResponseDto {
    this.consoleSessions.start(res, session.accessToken, session.expiresIn);
    return { user: session.user, expiresIn: session.expiresIn };
  }

  private endConsoleSession(req: ApiRequest & { [COOKIE_SESSION]?: string }, res: ApiReply): void {
    if (req[COOKIE_SESSION] !== undefined) {
      this.consoleSessions.end(res);
    }
  }
}

@ApiTags('auth')
@Controller('me')
export class MeController {
  constructor(private readonly users: UsersService) {}

  @Get()
  @ApiBearerAuth()
  @ApiOperation({ summary: 'The authenticated user' })
  @ApiOkResponse({ type: UserResponseDto })
  @ApiErrors(...AUTH_ERRORS, 'VALIDATION_ERROR')
  me(@CurrentUser() user: AuthUser): UserResponseDto {
    return this.users.toResponse(user.user);
  }
}
