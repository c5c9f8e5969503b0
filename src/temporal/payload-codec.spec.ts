import { describe, expect, it } from '@jest/globals';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { AesGcmPayloadCodec, ENCRYPTED_ENCODING, isSealed, PayloadDecryptionError } from './payload-codec.js';

const OLD = { id: 'old', key: Buffer.alloc(32, 1) };
const NEW = { id: 'new', key: Buffer.alloc(32, 2) };
const MARKER = 'marker-7f3a-secret-payload';

const text = (payload: Payload): string =>
  JSON.stringify(payload, (_k, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('latin1') : v));

describe('AesGcmPayloadCodec', () => {
  it('seals a payload so neither its data nor its metadata shows, and opens it again', async () => {
    const codec = new AesGcmPayloadCodec([NEW]);
    const plain = defaultPayloadConverter.toPayload({ ticket: MARKER });
    const [sealed] = await codec.encode([plain]);
    expect(isSealed(sealed!)).toBe(true);
    expect(Buffer.from(sealed!.metadata!.encoding!).toString()).toBe(ENCRYPTED_ENCODING);
    expect(Buffer.from(sealed!.metadata!['encryption-key-id']!).toString()).toBe('new');
    expect(text(sealed!)).not.toContain(MARKER);
    expect(text(sealed!)).not.toContain('json/plain');
    const [opened] = await codec.decode([sealed!]);
    expect(defaultPayloadConverter.fromPayload(opened!)).toEqual({ ticket: MARKER });
    // A fresh IV each time: the same value never seals to the same bytes.
    const [again] = await codec.encode([plain]);
    expect(Buffer.from(again!.data!).equals(Buffer.from(sealed!.data!))).toBe(false);
  });

  it('after a rotation, opens payloads sealed under the old key (kept decrypt-only) and seals with the new one', async () => {
    const [oldSealed] = await new AesGcmPayloadCodec([OLD]).encode([defaultPayloadConverter.toPayload(MARKER)]);
    const rotated = new AesGcmPayloadCodec([NEW, OLD]);
    const [opened] = await rotated.decode([oldSealed!]);
    expect(defaultPayloadConverter.fromPayload(opened!)).toBe(MARKER);
    const [newSealed] = await rotated.encode([defaultPayloadConverter.toPayload(MARKER)]);
    expect(Buffer.from(newSealed!.metadata!['encryption-key-id']!).toString()).toBe('new');
    // Once the old key is dropped, its payloads no longer open, and the error names the missing id.
    await expect(new AesGcmPayloadCodec([NEW]).decode([oldSealed!])).rejects.toThrow(/key id "old"/);
  });

  it('refuses a damaged payload or one sealed under another key with the same id', async () => {
    const codec = new AesGcmPayloadCodec([NEW]);
    const [sealed] = await codec.encode([defaultPayloadConverter.toPayload(MARKER)]);
    const damaged = Buffer.from(sealed!.data!);
    damaged[damaged.length - 1]! ^= 1;
    await expect(codec.decode([{ ...sealed!, data: damaged }])).rejects.toBeInstanceOf(PayloadDecryptionError);
    const impostor = new AesGcmPayloadCodec([{ id: 'new', key: Buffer.alloc(32, 9) }]);
    await expect(impostor.decode([sealed!])).rejects.toThrow(/does not open/);
  });

  it('passes payloads it did not seal through unchanged (histories from before the codec)', async () => {
    const plain = defaultPayloadConverter.toPayload({ a: 1 });
    const [out] = await new AesGcmPayloadCodec([NEW]).decode([plain]);
    expect(out).toBe(plain);
  });
});
