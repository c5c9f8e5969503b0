import { defaultPayloadConverter, METADATA_ENCODING_KEY, type Payload, type PayloadCodec } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
type Failure = temporal.api.failure.v1.IFailure;

function isPayload(value: object): value is Payload {
  const metadata = (value as Payload).metadata;
  return typeof metadata === 'object' && metadata !== null && metadata[METADATA_ENCODING_KEY] instanceof Uint8Array;
}

function hasEncodedAttributes(value: object): value is Failure & { encodedAttributes: Payload } {
  const attributes = (value as Failure).encodedAttributes;
  return typeof attributes === 'object' && attributes !== null && isPayload(attributes);
}

/** Every payload and every failure with encoded attributes under `node` (protobuf messages or plain objects). */
function collect(node: unknown, payloads: Payload[], failures: Failure[]): void {
  if (typeof node !== 'object' || node === null || ArrayBuffer.isView(node)) {
    return;
  }
  if (Array.isArray(node)) {
    for (const item of node) {
      collect(item, payloads, failures);
    }
    return;
  }
  if (isPayload(node)) {
    payloads.push(node);
    return;
  }
  if (hasEncodedAttributes(node)) {
    failures.push(node);
  }
  for (const value of Object.values(node)) {
    collect(value, payloads, failures);
  }
}

/**
 * Decodes a workflow history as fetched from the server (fetchHistory does not decode), in place:
 * every payload goes through the codec (inputs, results, signals, updates, memo, failure details,
 * timer summaries), and failures whose message and stack were encoded get them back. Payloads the
 * codec did not seal pass through. Walks the events generically, so a payload in any event type is
 * found; the one place where raw history is made readable (the timeline, the archive).
 */
export async function decodeHistoryEvents(events: HistoryEvent[], codec: PayloadCodec): Promise<HistoryEvent[]> {
  const payloads: Payload[] = [];
  const failures: Failure[] = [];
  collect(events, payloads, failures);
  if (payloads.length > 0) {
    const decoded = await codec.decode(payloads);
    payloads.forEach((payload, i) => {
      payload.metadata = decoded[i]!.metadata;
      payload.data = decoded[i]!.data;
    });
  }
  for (const failure of failures) {
    const attributes = defaultPayloadConverter.fromPayload<unknown>(failure.encodedAttributes!);
    if (typeof attributes === 'object' && attributes !== null) {
      const { message, stack_trace: stackTrace } = attributes as { message?: unknown; stack_trace?: unknown };
      if (typeof message === 'string') {
        failure.message = message;
      }
      if (typeof stackTrace === 'string') {
        failure.stackTrace = stackTrace;
      }
    }
    failure.encodedAttributes = null;
  }
  return events;
}
