/** Why a chat turn was stopped before it ended: the reason of its AbortSignal. */
export class ChatTurnAbortedError extends Error {
  override readonly name = 'ChatTurnAbortedError';

  constructor(
    /** `timeout`: CHAT_TIMEOUT passed; `client`: the client went away before the answer was written. */
    readonly why: 'timeout' | 'client',
  ) {
    super(why === 'timeout' ? 'chat timeout' : 'client disconnected');
  }
}
