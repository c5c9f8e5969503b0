/**
 * Everything the API, the worker and the workflows agree on: search attributes, workflow names, I/O types.
 * Imported by workflow code, so only `@temporalio/workflow`-safe imports here.
 */
import { defineSearchAttributeKey } from '@temporalio/common';

/** Search attributes every run carries, so an operator can filter runs in the Temporal UI. */
export const SEARCH_ATTRIBUTES = {
  agentId: defineSearchAttributeKey('AgentId', 'KEYWORD'),
  userId: defineSearchAttributeKey('UserId', 'KEYWORD'),
  triggeredBy: defineSearchAttributeKey('TriggeredBy', 'KEYWORD'),
} as const;

/** Name → Temporal type, for registering the attributes on a server. */
export const SEARCH_ATTRIBUTE_TYPES: Record<string, 'KEYWORD'> = {
  AgentId: 'KEYWORD',
  UserId: 'KEYWORD',
  TriggeredBy: 'KEYWORD',
};

export interface EchoInput {
  message: string;
}

export interface EchoOutput {
  message: string;
  handledBy: string;
}
