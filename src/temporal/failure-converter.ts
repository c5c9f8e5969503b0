/**
 * The failure converter of the API's client, the worker and the workflow bundle (loaded by path, see
 * temporalDataConverter): failure messages and stack traces go into `encodedAttributes`, a payload
 * the codec encrypts, so a site's error text or a stack never sits in Temporal's history in clear.
 * The history shows "Encoded failure" in their place. Workflow-safe: @temporalio/common only.
 */
import { DefaultFailureConverter } from '@temporalio/common';

export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
