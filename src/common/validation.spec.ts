import { describe, expect, it } from '@jest/globals';
import { AdminUserPatchDto } from '../admin/admin.controller.js';
import { UpdateAgentDto } from '../agents/dto/agent.dto.js';
import { AppError } from './app-error.js';
import { AppValidationPipe } from './validation.js';

const pipe = new AppValidationPipe();

async function refusal(value: unknown, metatype: new () => object): Promise<AppError | undefined> {
  try {
    await pipe.transform(value, { type: 'body', metatype });
    return undefined;
  } catch (err) {
    return err as AppError;
  }
}

describe('AppValidationPipe', () => {
  it('refuses null in an optional field whose column is NOT NULL, naming the field', async () => {
    for (const field of ['role', 'tier', 'credits', 'subscriptionStatus']) {
      const error = await refusal({ [field]: null }, AdminUserPatchDto);
      expect(error).toBeInstanceOf(AppError);
      expect(error?.code).toBe('VALIDATION_ERROR');
      expect(error?.details?.map((d) => d.field)).toContain(field);
    }
  });

  it('still lets optional fields be left out, and null where it means "clear"', async () => {
    expect(await refusal({}, AdminUserPatchDto)).toBeUndefined();
    expect(await refusal({ model: null }, UpdateAgentDto)).toBeUndefined();
    expect((await refusal({ name: null }, UpdateAgentDto))?.code).toBe('VALIDATION_ERROR');
  });

  it('refuses NUL characters anywhere in a body (PostgreSQL cannot store them)', async () => {
    const error = await refusal({ name: 'a\u0000b' }, UpdateAgentDto);
    expect(error?.details).toEqual([{ field: 'name', message: 'must not contain a NUL character (U+0000)' }]);
  });
});
