import { describe, expect, it } from '@jest/globals';
import { AppError } from '../../common/app-error.js';
import { AppValidationPipe } from '../../common/validation.js';
import { CreateAgentDto, UpdateAgentDto } from './agent.dto.js';

const pipe = new AppValidationPipe();
const base = { name: 'a', systemPrompt: 'p', siteIds: [], trigger: { type: 'manual' } };

/** The fields a refusal names (undefined: accepted). */
async function refusedFields(
  body: unknown,
  metatype: new () => object = CreateAgentDto,
): Promise<string[] | undefined> {
  try {
    await pipe.transform(body, { type: 'body', metatype });
    return undefined;
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('VALIDATION_ERROR');
    return (err as AppError).details?.map((d) => d.field) ?? [];
  }
}

describe('agent input: approvals', () => {
  it('takes a policy, null, absent, and scopes [] (none)', async () => {
    expect(await refusedFields({ ...base, approvals: { scopes: ['write', 'delete'] } })).toBeUndefined();
    expect(await refusedFields({ ...base, approvals: { scopes: ['admin'], timeoutSeconds: 60 } })).toBeUndefined();
    expect(await refusedFields({ ...base, approvals: { scopes: [], timeoutSeconds: 604_800 } })).toBeUndefined();
    expect(await refusedFields({ ...base, approvals: null })).toBeUndefined();
    expect(await refusedFields(base)).toBeUndefined();
    expect(await refusedFields({ approvals: null }, UpdateAgentDto)).toBeUndefined();
  });

  it.each([
    ['a string', 'write', 'approvals'],
    ['an array', ['write'], 'approvals'],
    ['no scopes', {}, 'approvals.scopes'],
    ['scopes null', { scopes: null }, 'approvals.scopes'],
    ['scopes not an array', { scopes: 'write' }, 'approvals.scopes'],
    ['an unknown scope', { scopes: ['read'] }, 'approvals.scopes'],
    ['a scope twice', { scopes: ['write', 'write'] }, 'approvals.scopes'],
    ['a timeout below 60 s', { scopes: ['write'], timeoutSeconds: 59 }, 'approvals.timeoutSeconds'],
    ['a timeout above 7 days', { scopes: ['write'], timeoutSeconds: 604_801 }, 'approvals.timeoutSeconds'],
    ['a fractional timeout', { scopes: ['write'], timeoutSeconds: 90.5 }, 'approvals.timeoutSeconds'],
    ['a timeout as text', { scopes: ['write'], timeoutSeconds: '90' }, 'approvals.timeoutSeconds'],
    ['a null timeout', { scopes: ['write'], timeoutSeconds: null }, 'approvals.timeoutSeconds'],
    ['an unknown field', { scopes: ['write'], after: 5 }, 'approvals.after'],
  ])('refuses %s, naming the field', async (_what, approvals, field) => {
    expect(await refusedFields({ ...base, approvals })).toContain(field);
    expect(await refusedFields({ approvals }, UpdateAgentDto)).toContain(field);
  });
});

describe('agent input: notify', () => {
  const url = 'https://hooks.example.com/in';

  it('takes a URL with events, null and absent', async () => {
    expect(await refusedFields({ ...base, notify: { url, events: ['approval_requested'] } })).toBeUndefined();
    expect(
      await refusedFields({ ...base, notify: { url, events: ['run_completed', 'run_failed', 'approval_requested'] } }),
    ).toBeUndefined();
    expect(await refusedFields({ ...base, notify: null })).toBeUndefined();
    expect(await refusedFields({ notify: null }, UpdateAgentDto)).toBeUndefined();
  });

  it.each([
    ['a string', url, 'notify'],
    ['no url', { events: ['run_failed'] }, 'notify.url'],
    ['a url that is no text', { url: 5, events: ['run_failed'] }, 'notify.url'],
    ['a url of 2001 characters', { url: `${url}/${'x'.repeat(2000)}`, events: ['run_failed'] }, 'notify.url'],
    ['no events', { url }, 'notify.events'],
    ['empty events', { url, events: [] }, 'notify.events'],
    ['an unknown event', { url, events: ['run_started'] }, 'notify.events'],
    ['an event twice', { url, events: ['run_failed', 'run_failed'] }, 'notify.events'],
    ['an unknown field', { url, events: ['run_failed'], secret: 'x' }, 'notify.secret'],
  ])('refuses %s, naming the field', async (_what, notify, field) => {
    expect(await refusedFields({ ...base, notify })).toContain(field);
    expect(await refusedFields({ notify }, UpdateAgentDto)).toContain(field);
  });
});
