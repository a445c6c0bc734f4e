/**
 * The rehearsal of the deployment (ARCHITECTURE.md): runs a synthesized cloud assembly on this
 * machine as `cdk deploy` would ship it. In order:
 * 1. provision what the stack defines: the table (DynamoDB Local), the queues (fauxqs), the
 *    media and search buckets (the local S3), the API's and the function URL's endpoints;
 * 2. the IAM gateway in front of DynamoDB, SQS, Step Functions and S3, with each function's role
 *    as a principal of its own (per-function credentials), so every SDK call is authorized
 *    against the role's synthesized policies, and each state machine's role, whose Lambda tasks
 *    are authorized the same way (principals.ts);
 * 3. the custom resources (deploy-time: the stored secrets), then every function on the host
 *    (host.ts) with its template environment;
 * 4. what drives them: the distribution (edge.ts) in front of the HTTP API's routes
 *    (api-gateway.ts) and the function URL, the event source mappings, the schedules, the state
 *    machine.
 * It prints one `rehearsal:` line saying what it loaded.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Assembly } from './assembly.js';
import { readHttpApi } from './api-gateway.js';
import { distributionHandler, readDistribution } from './edge.js';
import { FunctionHost } from './host.js';
import { provisionBuckets, provisionCustomResources, provisionTable, webBucketFiles } from './provision.js';
import { rolePrincipals } from './principals.js';
import { startStateMachines } from './state-machines.js';
import type { ExecutionRecord } from './state-machines.js';
import type { Authorizer, FunctionSpec, Invoker } from './types.js';
import type { AllowedCall } from './iam/gateway.js';

export interface RehearsalOptions {
  /** The cloud assembly folder (cdk.out). */
  assemblyDir: string;
  dynamoEndpoint: string;
  tableName: string;
  port: number;
  /** Where the queues and buckets keep their data between runs (npm start); in memory when absent. */
  sqsDataDir?: string;
  s3DataDir?: string;
  /** Deployment inputs every function gets (host.ts): the configuration, §12.2 overrides, test knobs. */
  inputs?: Record<string, string>;
  /** The functions' log lines: printed (default) or dropped (tests). */
  functionOutput?: 'inherit' | 'discard';
  /** Scales the schedules' and state machine waits' periods (tests), default 1. */
  timeScale?: number;
  log?: (line: string) => void;
}

export interface Rehearsal {
  url: string;
  assembly: Assembly;
  host: FunctionHost;
  /** The local S3 (the operator's view: its key is LOCAL_S3_CREDENTIALS). */
  s3: { endpoint: string; mediaBucket: string; searchBucket: string };
  /** The state machines' executions so far (Step Functions' view: status, input, output). */
  executions(): ExecutionRecord[];
  /** Every access the IAM gateway denied so far. */
  denials(): { principal: string; action: string; resource: string; message: string }[];
  /** Listens to the DynamoDB, SQS and Step Functions calls the gateway lets through (returns the unsubscribe). */
  onCall(listener: (call: AllowedCall) => void): () => void;
  /** Problems found in the assembly at start (a route without invoke permission, a mapping its role may not read). */
  problems: string[];
  summary: string;
  stop(): Promise<void>;
}

export async function startRehearsal(options: RehearsalOptions): Promise<Rehearsal> {
  const log = options.log ?? ((line: string) => console.log(line));
  const stops: (() => Promise<void> | void)[] = [];
  const stop = async () => {
    for (const s of stops.reverse()) await Promise.resolve(s()).catch(() => undefined);
  };
  try {
    const assembly = new Assembly(options.assemblyDir);
    const problems: string[] = [];
    const tmpRoot = mkdtempSync(join(tmpdir(), 'chat-relay-rehearsal-'));
    stops.push(() => rmSync(tmpRoot, { recursive: true, force: true }));

    // 1. Storage and queues, as the stack defines them.
    await provisionTable(assembly, options.dynamoEndpoint, options.tableName);
    const { LOCAL_MEDIA_BUCKET, LOCAL_S3_CREDENTIALS, LOCAL_SEARCH_BUCKET, startLocalS3 } = await import('../s3.js');
    // The stack's stateful buckets by their pinned logical ids (test/infra/templates.test.ts).
    provisionBuckets(assembly, { MediaBucket4022EBBF: LOCAL_MEDIA_BUCKET, SearchBucketDC7A81AD: LOCAL_SEARCH_BUCKET });
    const queues = await provisionQueues(assembly, options.sqsDataDir);
    stops.push(() => queues.stop());

    // The front's port first: the API's and function URL's endpoints name it.
    const server: Server = createServer();
    await new Promise<void>((ok, fail) => {
      server.once('error', fail);
      server.listen(options.port, '127.0.0.1', () => ok());
    });
    stops.push(() => new Promise<void>((ok) => (server.closeAllConnections(), server.close(() => ok()))));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const apiDomain = 'rehearsal.execute-api.us-east-1.amazonaws.com';
    const urlDomain = 'rehearsal.lambda-url.us-east-1.on.aws';
    for (const api of assembly.rawResources('AWS::ApiGatewayV2::Api'))
      assembly.setPhysical(api.stack, api.logicalId, {
        ref: 'rehearsal',
        attributes: { ApiEndpoint: `https://${apiDomain}`, ApiId: 'rehearsal' },
      });
    for (const fnUrl of assembly.rawResources('AWS::Lambda::Url'))
      assembly.setPhysical(fnUrl.stack, fnUrl.logicalId, {
        ref: `https://${urlDomain}/`,
        attributes: { FunctionUrl: `https://${urlDomain}/`, FunctionArn: '' },
      });

    // 2. The IAM gateway, with every function's role and every state machine's role as a principal.
    const { startIamGateway } = await import('./iam/gateway.js');
    const draft = assembly.functionsResolvable();
    const { principals, principalOf, credentials } = rolePrincipals(
      assembly,
      draft.map((d) => d.spec),
    );
    // The state machines run their tasks on the host made below (`late`), behind the gateway.
    const running: { host?: FunctionHost } = {};
    const lateInvoker: Invoker = {
      get functions() {
        return running.host!.functions;
      },
      find: (arn) => running.host?.find(arn),
      invoke: (key, event, o) => running.host!.invoke(key, event, o),
    };
    const gatewayAuthorizer: Authorizer = {
      authorize: (roleArn, action, resource, context) => authorizer.authorize(roleArn, action, resource, context),
    };
    const machineSpecs = assembly.resources('AWS::StepFunctions::StateMachine').map((m) => ({
      logicalId: m.logicalId,
      name: String(assembly.attribute(m.stack, m.logicalId, 'Name')),
      arn: assembly.ref(m.stack, m.logicalId),
      roleArn: String(m.properties.RoleArn),
      definition: String(m.properties.DefinitionString),
    }));
    for (const m of machineSpecs.filter((spec) => !principalOf.has(spec.roleArn)))
      problems.push(
        `state machine ${m.logicalId}: its role ${m.roleArn} is not in the assembly, so its tasks are denied`,
      );
    const machines = await startStateMachines({
      machines: machineSpecs,
      invoker: lateInvoker,
      authorizer: gatewayAuthorizer,
      timeScale: options.timeScale ?? 1,
      log: (line) => log(`rehearsal: ${line}`),
    });
    stops.push(() => machines.stop());
    const gateway = await startIamGateway({
      account: assembly.account,
      region: assembly.region,
      principals,
      upstream: { dynamodb: options.dynamoEndpoint, sqs: queues.endpoint, sfn: machines.endpoint },
      resourcePolicies: resourcePolicies(assembly),
    });
    stops.push(() => gateway.stop());
    const authorizer: Authorizer = {
      authorize: (roleArn, action, resource, context) => {
        const name = principalOf.get(roleArn);
        if (!name) return Promise.resolve({ allowed: false, message: `No role ${roleArn} in the assembly.` });
        return gateway.authorize(name, action, resource, context);
      },
    };
    // The operator's own key (LOCAL_S3_CREDENTIALS: tests looking into the buckets) is verified, never denied.
    const s3 = await startLocalS3(options.s3DataDir, gateway.s3Hook(LOCAL_S3_CREDENTIALS));
    stops.push(() => s3.stop());

    const runtimeEnvironment = (spec: FunctionSpec) => ({
      AWS_ACCESS_KEY_ID: credentials.get(spec.roleArn)!.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.get(spec.roleArn)!.secretAccessKey,
      DYNAMODB_ENDPOINT: gateway.endpoints.dynamodb,
      SQS_ENDPOINT: gateway.endpoints.sqs,
      S3_ENDPOINT: s3.endpoint,
      // Step Functions has no endpoint variable of ours: the SDK's own service-specific one.
      AWS_ENDPOINT_URL_SFN: gateway.endpoints.sfn ?? '',
    });

    // 3. Deploy time: the custom resources, on the functions that can run before them.
    const early = new FunctionHost({
      functions: draft.map((d) => d.spec),
      runtimeEnvironment,
      tmpRoot,
      inputs: options.inputs ?? {},
      output: options.functionOutput ?? 'inherit',
    });
    const made = await provisionCustomResources(assembly, early, authorizer).finally(() => early.stop());
    const specs = assembly.functions();
    const late = specs.filter((f) => !principalOf.has(f.roleArn));
    if (late.length > 0)
      throw new Error(
        `Roles the rehearsal could not read before the custom resources ran: ${late.map((f) => f.logicalId).join(', ')}`,
      );
    const host = new FunctionHost({
      functions: specs,
      runtimeEnvironment,
      tmpRoot,
      inputs: options.inputs ?? {},
      output: options.functionOutput ?? 'inherit',
    });
    stops.push(() => host.stop());
    running.host = host;
    // The deploy-time invocations count as the functions' runs too.
    for (const [key, n] of early.invocations) host.invocations.set(key, n);

    // 4. What drives the functions.
    const http = readHttpApi(assembly, host);
    problems.push(...http.problems);
    const urls = assembly.resources('AWS::Lambda::Url');
    const urlFunction = urls[0] ? host.find(String(urls[0].properties.TargetFunctionArn)) : undefined;
    if (!urlFunction) throw new Error('The assembly has no function URL for the event stream.');
    const urlPermitted = assembly
      .resources('AWS::Lambda::Permission')
      .some(
        (p) =>
          p.properties.Action === 'lambda:InvokeFunctionUrl' &&
          p.properties.FunctionUrlAuthType === 'NONE' &&
          host.find(String(p.properties.FunctionName))?.key === urlFunction.key,
      );
    if (!urlPermitted)
      problems.push(`function URL: ${urlFunction.logicalId} grants no public lambda:InvokeFunctionUrl`);
    const webBucket = assembly.rawResources('AWS::S3::Bucket').find((b) => /^WebBucket/.test(b.logicalId));
    const staticBuckets = new Map();
    if (webBucket)
      staticBuckets.set(
        String(assembly.attribute(webBucket.stack, webBucket.logicalId, 'RegionalDomainName')),
        webBucketFiles(assembly, webBucket.logicalId),
      );
    const mediaDomain = `${s3.bucket}.s3.${assembly.region}.amazonaws.com`;
    server.on(
      'request',
      distributionHandler(
        readDistribution(assembly),
        {
          api: { domain: apiDomain, http },
          functionUrl: { domain: urlDomain, functionKey: urlFunction.key, permitted: urlPermitted },
          staticBuckets,
          s3Buckets: new Map([[mediaDomain, { endpoint: s3.endpoint, bucket: s3.bucket }]]),
        },
        host,
      ),
    );
    const { startDrivers } = await import('./drivers.js');
    const drivers = await startDrivers({
      assembly,
      host,
      authorizer,
      queues,
      dynamodbEndpoint: options.dynamoEndpoint,
      timeScale: options.timeScale ?? 1,
      log: (line) => log(`rehearsal: ${line}`),
    });
    problems.push(...drivers.problems);
    stops.push(() => drivers.stop());

    const policies = specs.reduce((n, s) => n + s.policies.length, 0);
    const summary =
      `rehearsal: ${specs.length} functions, ${http.routes.length + (http.fallback ? 1 : 0)} routes, ` +
      `${drivers.mappings} mappings, ${drivers.schedules} schedules, ${machineSpecs.length} state machines, ` +
      `${policies} policies, ${made.length} custom resources from ${options.assemblyDir}` +
      (problems.length ? `; ${problems.length} problems:\n  ${problems.join('\n  ')}` : '');
    log(summary);
    return {
      url,
      assembly,
      host,
      s3: { endpoint: s3.endpoint, mediaBucket: s3.bucket, searchBucket: s3.searchBucket },
      executions: () => machines.executions(),
      denials: () => [...gateway.denials],
      onCall: (listener) => gateway.onCall(listener),
      problems,
      summary,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * The assembly's queues in an SQS emulator of their own (queues.ts): their names are known before
 * they exist, so a queue's properties naming another (a redrive policy's dead-letter ARN) resolve.
 */
async function provisionQueues(assembly: Assembly, _dataDir: string | undefined) {
  const { startFauxqsOnLoopback } = await import('../fauxqs.js');
  const { createQueues, queueArn, queueName } = await import('./queues.js');
  const server = await startFauxqsOnLoopback({ port: 0, logger: false });
  const endpoint = `http://127.0.0.1:${server.port}`;
  const stackNameOf = (stack: string) =>
    stack ? `${assembly.stackName}-${stack.split('/').join('-')}` : assembly.stackName;
  for (const q of assembly.rawResources('AWS::SQS::Queue')) {
    const given = q.raw.Properties?.QueueName;
    const name = queueName(stackNameOf(q.stack), {
      stack: q.stack,
      logicalId: q.logicalId,
      properties: {
        ...(typeof given === 'string' ? { QueueName: given } : {}),
        ...(q.raw.Properties?.FifoQueue ? { FifoQueue: true } : {}),
      },
    });
    const url = `${endpoint}/${assembly.account}/${name}`;
    assembly.setPhysical(q.stack, q.logicalId, {
      ref: url,
      attributes: { Arn: queueArn(name), QueueName: name, QueueUrl: url },
    });
  }
  const queues = await createQueues({
    endpoint,
    stackName: assembly.stackName,
    resources: assembly.resources('AWS::SQS::Queue'),
  });
  for (const q of queues.queues)
    assembly.setPhysical(q.stack, q.logicalId, {
      ref: q.url,
      attributes: { Arn: q.arn, QueueName: q.name, QueueUrl: q.url },
    });
  return {
    ...queues,
    endpoint,
    stop: async () => {
      await queues.stop();
      await server.stop();
    },
  };
}

/** Queue and bucket policies, by the ARN of the queue or bucket they guard. */
function resourcePolicies(assembly: Assembly): Record<string, { Statement: Record<string, unknown>[] }> {
  const out: Record<string, { Statement: Record<string, unknown>[] }> = {};
  for (const policy of assembly.resources('AWS::SQS::QueuePolicy')) {
    const document = policy.properties.PolicyDocument as { Statement: Record<string, unknown>[] };
    for (const url of (policy.properties.Queues as string[]) ?? []) {
      const name = url.split('/').pop()!;
      out[`arn:aws:sqs:${assembly.region}:${assembly.account}:${name}`] = document;
    }
  }
  for (const policy of assembly.resources('AWS::S3::BucketPolicy')) {
    out[`arn:aws:s3:::${String(policy.properties.Bucket)}`] = policy.properties.PolicyDocument as {
      Statement: Record<string, unknown>[];
    };
  }
  return out;
}
