/**
 * AWS list prices, us-east-1 (N. Virginia), on-demand, in USD, as of 2026-11-25.
 * Source: the public pricing pages (aws.amazon.com/<service>/pricing: lambda, api-gateway,
 * cloudfront, dynamodb, sqs, s3, step-functions, cloudwatch, xray), first
 * tier of each meter. Free tiers are NOT subtracted (the model states the bill of a real
 * month on a busy account, the figure issue 16's goals are measured against).
 * Update the date and the figures together.
 */
export const PRICES_AS_OF = '2026-11-25';
export const PRICES_REGION = 'us-east-1';

export const PRICES = {
  lambda: {
    /** arm64 (Graviton), per GB-second of billed duration (1 ms granularity). */
    gbSecondArm: 0.0000133334,
    /** Per invocation. */
    request: 0.2 / 1e6,
  },
  apiGateway: {
    /** HTTP API, first 300 million requests a month (each 512 KB of payload is one request). */
    httpRequest: 1.0 / 1e6,
  },
  cloudFront: {
    /** HTTPS requests, United States/Mexico/Canada, per request ($0.0100 per 10,000). */
    httpsRequest: 0.01 / 1e4,
    /** Data transfer out to the internet, United States, first 10 TB, per GB. */
    dataOutGb: 0.085,
    /** Data transfer out to the origin (request bodies), United States, per GB. */
    dataToOriginGb: 0.02,
  },
  dynamodb: {
    /** On-demand, Standard table class: per write request unit (1 KB). */
    wru: 0.625 / 1e6,
    /** On-demand, per read request unit (4 KB strongly consistent, or 2 eventually consistent). */
    rru: 0.125 / 1e6,
    /** Storage, Standard table class, per GB-month (first 25 GB not subtracted, see above). */
    storageGbMonth: 0.25,
    /**
     * Continuous backups (point-in-time recovery, on in lib/constructs/storage.ts), per GB-month
     * of the table's size.
     */
    pitrGbMonth: 0.2,
  },
  sqs: {
    /** Standard queue, per request (each 64 KB of payload is one request). */
    standardRequest: 0.4 / 1e6,
    /** FIFO queue, per request. */
    fifoRequest: 0.5 / 1e6,
  },
  s3: {
    /** Standard: PUT, COPY, POST, LIST, per request. */
    put: 0.005 / 1e3,
    /** Standard: GET, SELECT and the rest, per request. */
    get: 0.0004 / 1e3,
    storageGbMonth: 0.023,
  },
  stepFunctions: {
    /** Standard workflows, per state transition. */
    standardTransition: 0.025 / 1e3,
  },
  xray: {
    /** Traces recorded (the stream-timeout state machine has tracing on). */
    traceRecorded: 5.0 / 1e6,
  },
  cloudWatch: {
    /** Logs ingestion (Standard log class), per GB. */
    logsIngestGb: 0.5,
    /** Logs ingestion, Infrequent Access log class (the API's access logs), per GB. */
    logsIngestGbInfrequent: 0.25,
    /** Standard-resolution metric alarm, per alarm-month. */
    alarmMonth: 0.1,
  },
} as const;

export type Prices = typeof PRICES;
