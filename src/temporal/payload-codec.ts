import { createCipheriv, createDecipheriv, createSecretKey, type KeyObject, randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type DataConverter,
  defaultPayloadConverter,
  type LoadedDataConverter,
  METADATA_ENCODING_KEY,
  type Payload,
  type PayloadCodec,
} from '@temporalio/common';
import proto from '@temporalio/proto';
import type { Settings, VaultKey } from '../config/settings.js';
import { failureConverter } from './failure-converter.js';

/** The `encoding` of a payload this codec sealed (the one Temporal's encryption samples use). */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
/** Metadata entry naming the TEMPORAL_CODEC_KEY id that sealed a payload, so keys can rotate. */
export const KEY_ID_METADATA = 'encryption-key-id';

const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const ProtoPayload = proto.temporal.api.common.v1.Payload;

/** The failure converter module, loaded by path: the workflow bundle and the worker's activities use it. */
export const FAILURE_CONVERTER_PATH = path.join(path.dirname(fileURLToPath(import.meta.url)), 'failure-converter.js');

/** A sealed payload that does not open: its key is not in TEMPORAL_CODEC_KEY, or its bytes are damaged. */
export class PayloadDecryptionError extends Error {
  constructor(
    message: string,
    readonly keyId: string | undefined,
  ) {
    super(message);
    this.name = 'PayloadDecryptionError';
  }
}

const utf8 = (bytes: Uint8Array | null | undefined): string | undefined =>
  bytes === null || bytes === undefined ? undefined : Buffer.from(bytes).toString('utf8');

/**
 * Encrypts every payload with AES-256-GCM under the first TEMPORAL_CODEC_KEY (a fresh 96-bit IV per
 * payload; the key id is bound as additional data) and decrypts with whichever key id the payload
 * names. The whole original payload (its metadata, then its data) is sealed, so the server sees only
 * `binary/encrypted` and a key id. Payloads it did not seal (histories written before it, search
 * attributes) pass through unchanged. Runs outside the workflow sandbox: in the client and in the
 * worker's main thread.
 */
export class AesGcmPayloadCodec implements PayloadCodec {
  /**
   * The keys as KeyObjects, made once: a cipher made from a KeyObject costs less than half the CPU of
   * one made from the key's bytes, which Node turns into a key object at every call (every payload).
   */
  private readonly byId: Map<string, KeyObject>;
  private readonly current: { id: string; key: KeyObject };

  constructor(keys: readonly VaultKey[]) {
    if (keys.length === 0) {
      throw new Error('the payload codec needs at least one key');
    }
    this.byId = new Map(keys.map((k) => [k.id, createSecretKey(k.key)]));
    this.current = { id: keys[0]!.id, key: createSecretKey(keys[0]!.key) };
  }

  encode(payloads: Payload[]): Promise<Payload[]> {
    return settle(() => payloads.map((payload) => this.seal(payload)));
  }

  decode(payloads: Payload[]): Promise<Payload[]> {
    return settle(() => payloads.map((payload) => this.open(payload)));
  }

  seal(payload: Payload): Payload {
    const { id, key } = this.current;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(id, 'utf8'));
    const plain = ProtoPayload.encode(payload).finish();
    const sealed = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
    return {
      metadata: {
        [METADATA_ENCODING_KEY]: Buffer.from(ENCRYPTED_ENCODING, 'utf8'),
        [KEY_ID_METADATA]: Buffer.from(id, 'utf8'),
      },
      data: sealed,
    };
  }

  open(payload: Payload): Payload {
    if (!isSealed(payload)) {
      return payload;
    }
    const id = utf8(payload.metadata?.[KEY_ID_METADATA]);
    const key = id === undefined ? undefined : this.byId.get(id);
    if (id === undefined || key === undefined) {
      throw new PayloadDecryptionError(
        `a payload was sealed with key id "${id ?? '(none)'}", which TEMPORAL_CODEC_KEY does not hold: ` +
          'add that key after the current one',
        id,
      );
    }
    const data = Buffer.from(payload.data ?? new Uint8Array());
    if (data.length < IV_BYTES + TAG_BYTES) {
      throw new PayloadDecryptionError(`a payload sealed with key id "${id}" is too short to be one`, id);
    }
    try {
      const decipher = createDecipheriv(ALGORITHM, key, data.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(id, 'utf8'));
      decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
      const plain = Buffer.concat([
        decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)),
        decipher.final(),
      ]);
      const inner = ProtoPayload.decode(plain);
      return { metadata: inner.metadata, data: inner.data };
    } catch {
      throw new PayloadDecryptionError(
        `a payload sealed with key id "${id}" does not open with that key (damaged, or another key under the same id)`,
        id,
      );
    }
  }
}

/** The work is synchronous (node:crypto); callers of a codec expect failures as rejections. */
function settle<T>(work: () => T): Promise<T> {
  try {
    return Promise.resolve(work());
  } catch (err) {
    return Promise.reject(err as Error);
  }
}

/** Whether this codec sealed the payload (by its `encoding` metadata). */
export function isSealed(payload: Payload): boolean {
  return utf8(payload.metadata?.[METADATA_ENCODING_KEY]) === ENCRYPTED_ENCODING;
}

/** The codec over the service's TEMPORAL_CODEC_KEY. */
export function temporalPayloadCodec(settings: Pick<Settings, 'temporalCodecKeys'>): AesGcmPayloadCodec {
  return new AesGcmPayloadCodec(settings.temporalCodecKeys);
}

/**
 * The data converter of the service's worker (Worker.create): payloads through the codec, failure
 * messages and stacks encoded (and so encrypted) too. The worker loads the failure converter by path
 * (the workflow bundle needs it by path as well).
 */
export function temporalDataConverter(
  settings: Pick<Settings, 'temporalCodecKeys'>,
): DataConverter & { failureConverterPath: string } {
  return { payloadCodecs: [temporalPayloadCodec(settings)], failureConverterPath: FAILURE_CONVERTER_PATH };
}

/**
 * The same converter, loaded, for Temporal clients: a Client takes a loaded converter as it is, so
 * nothing is require()d by path (which jest's module loader cannot do for an ES module).
 */
export function temporalClientDataConverter(settings: Pick<Settings, 'temporalCodecKeys'>): DataConverter {
  const loaded: LoadedDataConverter = {
    payloadConverter: defaultPayloadConverter,
    failureConverter,
    payloadCodecs: [temporalPayloadCodec(settings)],
  };
  // Client's options are typed DataConverter, and it uses a LoadedDataConverter as given.
  return loaded;
}
