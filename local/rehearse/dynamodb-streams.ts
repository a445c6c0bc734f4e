/**
 * The DynamoDB Streams API of DynamoDB Local, spoken directly (AWS JSON 1.0, target
 * `DynamoDBStreams_20120810.<Operation>`) for the stream pollers (stream-mappings.ts): the SDK's
 * `@aws-sdk/client-dynamodb-streams` is not among the project's packages, and four calls do not
 * justify one. DynamoDB Local checks no signature but wants an Authorization header naming an
 * access key, so a fixed one is sent.
 *
 *   const api = new StreamsApi(endpoint)
 *   api.latestStreamArn(tableName) -> Promise<string | undefined>   (DescribeTable)
 *   api.shards(streamArn) -> Promise<Shard[]>                         (DescribeStream, every page)
 *   api.iterator(streamArn, shardId, type, sequenceNumber?) -> Promise<string>
 *   api.records(iterator) -> Promise<{ records: RawStreamRecord[]; next?: string }>
 *   errors: StreamsApiError { code }  (ExpiredIteratorException, TrimmedDataAccessException, ...)
 */

export interface Shard {
  ShardId: string;
  ParentShardId?: string;
  SequenceNumberRange?: { StartingSequenceNumber?: string; EndingSequenceNumber?: string };
}

/** A record as GetRecords returns it (the event's record without eventSourceARN). */
export interface RawStreamRecord {
  eventID: string;
  eventName: 'INSERT' | 'MODIFY' | 'REMOVE';
  eventVersion?: string;
  eventSource?: string;
  awsRegion?: string;
  userIdentity?: unknown;
  dynamodb: {
    ApproximateCreationDateTime?: number;
    Keys?: Record<string, unknown>;
    NewImage?: Record<string, unknown>;
    OldImage?: Record<string, unknown>;
    SequenceNumber: string;
    SizeBytes?: number;
    StreamViewType?: string;
  };
}

export type IteratorType = 'TRIM_HORIZON' | 'LATEST' | 'AFTER_SEQUENCE_NUMBER' | 'AT_SEQUENCE_NUMBER';

export class StreamsApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(`${code}: ${message}`);
    this.name = 'StreamsApiError';
  }
}

const AUTHORIZATION =
  'AWS4-HMAC-SHA256 Credential=rehearsal/20000101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0';

export class StreamsApi {
  constructor(private readonly endpoint: string) {}

  async call<T>(target: string, body: unknown): Promise<T> {
    const response = await fetch(this.endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': target,
        authorization: AUTHORIZATION,
      },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    const parsed = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
    if (!response.ok) {
      const type = String(parsed.__type ?? `HTTP ${response.status}`);
      throw new StreamsApiError(
        type.slice(type.lastIndexOf('#') + 1),
        String(parsed.message ?? parsed.Message ?? text),
      );
    }
    return parsed as T;
  }

  async latestStreamArn(tableName: string): Promise<string | undefined> {
    const out = await this.call<{ Table?: { LatestStreamArn?: string } }>('DynamoDB_20120810.DescribeTable', {
      TableName: tableName,
    });
    return out.Table?.LatestStreamArn;
  }

  async shards(streamArn: string): Promise<Shard[]> {
    const shards: Shard[] = [];
    let start: string | undefined;
    do {
      const out = await this.call<{ StreamDescription: { Shards?: Shard[]; LastEvaluatedShardId?: string } }>(
        'DynamoDBStreams_20120810.DescribeStream',
        { StreamArn: streamArn, ...(start ? { ExclusiveStartShardId: start } : {}) },
      );
      shards.push(...(out.StreamDescription.Shards ?? []));
      start = out.StreamDescription.LastEvaluatedShardId;
    } while (start);
    return shards;
  }

  async iterator(streamArn: string, shardId: string, type: IteratorType, sequenceNumber?: string): Promise<string> {
    const out = await this.call<{ ShardIterator: string }>('DynamoDBStreams_20120810.GetShardIterator', {
      StreamArn: streamArn,
      ShardId: shardId,
      ShardIteratorType: type,
      ...(sequenceNumber ? { SequenceNumber: sequenceNumber } : {}),
    });
    return out.ShardIterator;
  }

  async records(iterator: string): Promise<{ records: RawStreamRecord[]; next?: string | undefined }> {
    const out = await this.call<{ Records?: RawStreamRecord[]; NextShardIterator?: string }>(
      'DynamoDBStreams_20120810.GetRecords',
      { ShardIterator: iterator, Limit: 1000 },
    );
    return { records: out.Records ?? [], next: out.NextShardIterator };
  }
}
