/**
 * EventBridge on moto, for the integration tests, without @aws-sdk/client-eventbridge (not a dependency yet): the
 * JSON protocol (awsJson1_1, `X-Amz-Target: AWSEvents.<Operation>`) that the SDK's client speaks, over fetch. moto
 * does not check signatures; the Authorization header only names the Region. A PutEventsClient for the publisher,
 * and the calls a test needs to route events to a queue.
 */
import type { PutEventsClient, PutEventsOutput } from '../../functions/aws/event-publisher';
import { LOCAL_REGION } from '../../testing/local/local-aws';

export interface MotoEventBridge extends PutEventsClient {
  call(operation: string, body: object): Promise<Record<string, unknown>>;
}

export function motoEventBridge(endpoint: string): MotoEventBridge {
  const call = async (operation: string, body: object): Promise<Record<string, unknown>> => {
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-amz-json-1.1',
        'X-Amz-Target': `AWSEvents.${operation}`,
        Authorization: `AWS4-HMAC-SHA256 Credential=local/20261130/${LOCAL_REGION}/events/aws4_request, SignedHeaders=host, Signature=0`,
      },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) {
      const error = JSON.parse(text || '{}') as { __type?: string; message?: string };
      throw Object.assign(new Error(error.message ?? text), {
        name: error.__type?.split('#').at(-1) ?? 'EventBridgeError',
        $metadata: { httpStatusCode: response.status },
      });
    }
    return JSON.parse(text || '{}');
  };
  return {
    call,
    async putEvents(input) {
      // The SDK sends a Date as epoch seconds in this protocol.
      const entries = input.Entries.map((e) => ({ ...e, Time: e.Time.getTime() / 1000 }));
      return (await call('PutEvents', { Entries: entries })) as PutEventsOutput;
    },
  };
}
