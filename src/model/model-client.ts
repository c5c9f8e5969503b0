import Anthropic from '@anthropic-ai/sdk';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { AppError } from '../common/app-error.js';
import { SETTINGS } from '../config/settings.module.js';
import { type Settings } from '../config/settings.js';
import { MetricsService } from '../metrics/metrics.service.js';
import type { ModelContentBlock, ModelMessage, ModelTool } from '../../workflows/contracts.js';

export const MAX_OUTPUT_TOKENS = 4096;
const MODEL_TIMEOUT_MS = 120_000;

export interface ModelRequest {
  model: string;
  system: string;
  messages: ModelMessage[];
  tools: ModelTool[];
}

export interface ModelAnswer {
  content: ModelContentBlock[];
  text: string;
  stopReason: string;
  usage: { inputTokens: number; outputTokens: number };
}

/** A MODEL_ERROR that says whether trying again could help (429, 5xx, overload, network). */
export class ModelError extends AppError {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super('MODEL_ERROR', message);
    this.name = 'ModelError';
  }
}

export type ModelStreamEvent = Anthropic.RawMessageStreamEvent;

/**
 * The one model client (runs and chat): the Anthropic SDK with ANTHROPIC_API_KEY and
 * ANTHROPIC_BASE_URL. Without a key the service still starts, and every model call answers
 * MODEL_ERROR saying so. Retries are the caller's (Temporal's, for runs): the SDK makes one attempt.
 */
@Injectable()
export class ModelClient {
  private readonly client: Anthropic | undefined;

  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly metrics: MetricsService,
  ) {
    this.client =
      settings.anthropicApiKey === undefined
        ? undefined
        : new Anthropic({
            apiKey: settings.anthropicApiKey,
            baseURL: settings.anthropicBaseUrl,
            maxRetries: 0,
            timeout: MODEL_TIMEOUT_MS,
            // Given here, not left to the SDK's ANTHROPIC_OPEN_TELEMETRY* variables. A span per call
            // when tracing is on (src/tracing: OTEL_EXPORTER_OTLP_ENDPOINT), never with prompts or
            // answers; the fetch instrumentation sends the trace context, so the SDK does not send it
            // a second time. Off, the SDK builds no span at all (with no tracer registered it still
            // built and ended no-op spans on every call: about 0.1 ms of CPU a model call).
            openTelemetry: {
              propagation: false,
              traces: { enabled: settings.otelExporterOtlpEndpoint !== undefined, contentMode: 'metadata_only' },
            },
          });
  }

  private sdk(): Anthropic {
    if (this.client === undefined) {
      throw new ModelError(
        'No model provider is configured: set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for a compatible endpoint)',
        false,
      );
    }
    return this.client;
  }

  private params(request: ModelRequest) {
    return {
      model: request.model,
      max_tokens: MAX_OUTPUT_TOKENS,
      system: request.system,
      messages: request.messages as Anthropic.MessageParam[],
      ...(request.tools.length > 0 ? { tools: request.tools as Anthropic.Tool[] } : {}),
    };
  }

  async create(request: ModelRequest, signal?: AbortSignal): Promise<ModelAnswer> {
    const sdk = this.sdk();
    try {
      const message = await sdk.messages.create(this.params(request), { signal });
      return this.counted(answerOf(message));
    } catch (err) {
      throw modelFailure(err);
    }
  }

  /** Streams a turn: `onEvent` sees every event as it arrives; resolves with the whole message. */
  async stream(
    request: ModelRequest,
    onEvent: (event: ModelStreamEvent) => void,
    signal?: AbortSignal,
  ): Promise<ModelAnswer> {
    const sdk = this.sdk();
    try {
      const stream = sdk.messages.stream(this.params(request), { signal });
      stream.on('streamEvent', onEvent);
      return this.counted(answerOf(await stream.finalMessage()));
    } catch (err) {
      throw modelFailure(err);
    }
  }

  /** Every answered model call's tokens, runs and chat alike (a retried turn's tokens were used too). */
  private counted(answer: ModelAnswer): ModelAnswer {
    this.metrics.modelUsage(answer.usage);
    return answer;
  }
}

function answerOf(message: Anthropic.Message): ModelAnswer {
  const content: ModelContentBlock[] = [];
  for (const block of message.content) {
    if (block.type === 'text') {
      content.push({ type: 'text', text: block.text });
    } else if (block.type === 'tool_use') {
      content.push({ type: 'tool_use', id: block.id, name: block.name, input: block.input });
    }
  }
  return {
    content,
    text: content
      .filter((b): b is { type: 'text'; text: string } => b.type === 'text')
      .map((b) => b.text)
      .join(''),
    stopReason: message.stop_reason ?? 'end_turn',
    usage: { inputTokens: message.usage.input_tokens, outputTokens: message.usage.output_tokens },
  };
}

/** Whether an error is the caller's own abort (client gone, timeout of the turn). */
function isAbort(err: unknown): boolean {
  return err instanceof Anthropic.APIUserAbortError || (err instanceof Error && err.name === 'AbortError');
}

const logger = new Logger('Model');

/**
 * A MODEL_ERROR whose message users and run timelines may show: the provider's status and its error
 * type, never its body or a runtime error's text (those go to the log).
 */
function modelFailure(err: unknown): unknown {
  if (err instanceof ModelError || isAbort(err)) {
    return err;
  }
  logger.warn(`model call failed: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`);
  if (err instanceof Anthropic.APIConnectionError) {
    return new ModelError('The model provider could not be reached', true);
  }
  if (err instanceof Anthropic.APIError) {
    const status = err.status ?? 0;
    const retryable = status === 408 || status === 409 || status === 429 || status >= 500;
    const type = (err.error as { error?: { type?: unknown } } | undefined)?.error?.type;
    const kind = typeof type === 'string' && /^[a-z_]{1,64}$/.test(type) ? ` (${type})` : '';
    return new ModelError(`The model provider answered ${status}${kind}`, retryable);
  }
  return new ModelError('The model call failed unexpectedly; the details are in the log', false);
}
