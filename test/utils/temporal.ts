import { Client, Connection } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { parseKeyList } from '../../src/config/setting-parsers.js';
import { temporalClientDataConverter, temporalPayloadCodec } from '../../src/temporal/payload-codec.js';
import { testEnv } from '../setup/shared-runtime.js';

/** The TEMPORAL_CODEC_KEY of every test stack, so tests (and stacks of other files) read each other's runs. */
export const TEST_PAYLOAD_KEY = `tp1:${Buffer.alloc(32, 24).toString('base64')}`;

function keysOf(key: string): ReturnType<typeof parseKeyList> {
  const problems: string[] = [];
  const keys = parseKeyList('TEMPORAL_CODEC_KEY', key, problems);
  if (problems.length > 0) {
    throw new Error(problems.join('; '));
  }
  return keys;
}

/**
 * The payload codec as a worker's data converter (the stacks' key by default), for the tests' own
 * workers and replays. Without the service's failure converter: Worker.create loads that by path
 * with require(), which jest's module loader cannot do for an ES module; failures those workers'
 * fixture workflows raise stay in clear (test data only), and encoded failures still decode.
 */
export function testDataConverter(key: string = TEST_PAYLOAD_KEY): DataConverter {
  return { payloadCodecs: [temporalPayloadCodec({ temporalCodecKeys: keysOf(key) })] };
}

/** The service's payload codec over a TEMPORAL_CODEC_KEY value (the stacks' by default). */
export function testPayloadCodec(key: string = TEST_PAYLOAD_KEY): ReturnType<typeof temporalPayloadCodec> {
  return temporalPayloadCodec({ temporalCodecKeys: keysOf(key) });
}

/**
 * A Temporal client as the service's own: with the payload codec, so what it writes is encrypted and
 * what it reads (results, memos, queries) is decoded. Close `connection` when done.
 */
export async function temporalClient(
  options: { address?: string; key?: string } = {},
): Promise<{ client: Client; connection: Connection }> {
  const connection = await Connection.connect({ address: options.address ?? testEnv('temporalAddress') });
  return {
    client: new Client({
      connection,
      dataConverter: temporalClientDataConverter({ temporalCodecKeys: keysOf(options.key ?? TEST_PAYLOAD_KEY) }),
    }),
    connection,
  };
}
