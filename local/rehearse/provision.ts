/**
 * What `cdk deploy` creates before anything runs, made from the assembly's own definitions:
 * - each `AWS::DynamoDB::Table` on DynamoDB Local, from its key schema, attributes, indexes and
 *   stream (a table that exists already, from an earlier run, must have the same keys and
 *   indexes: a different one fails the start, as a replacement would on AWS);
 * - each `AWS::S3::Bucket` that a function or the distribution uses, on the local S3 (the media
 *   and search buckets by their logical ids; the web bucket is served from its deployment's
 *   source asset instead, see webBucketFiles);
 * - each custom resource backed by the CDK Provider framework: its user function (the framework
 *   function's USER_ON_EVENT_FUNCTION_ARN) gets CloudFormation's Create event, and its answer's
 *   Data become the resource's attributes (the framework's own code is CDK's, not run here).
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceNotFoundException,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import type { CreateTableCommandInput, StreamViewType, TableDescription } from '@aws-sdk/client-dynamodb';
import type { Assembly } from './assembly.js';
import { globPattern } from './glob.js';
import type { Authorizer, Invoker } from './types.js';

const ADMIN = { region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };

interface TableProperties {
  TableName?: string;
  KeySchema: CreateTableCommandInput['KeySchema'];
  AttributeDefinitions: CreateTableCommandInput['AttributeDefinitions'];
  GlobalSecondaryIndexes?: CreateTableCommandInput['GlobalSecondaryIndexes'];
  StreamSpecification?: { StreamViewType: StreamViewType };
  TimeToLiveSpecification?: { AttributeName: string; Enabled: boolean };
}

/** Creates (or checks) the assembly's table under `tableName`, and sets its Ref, Arn and StreamArn. */
export async function provisionTable(assembly: Assembly, endpoint: string, tableName: string): Promise<void> {
  const tables = assembly.rawResources('AWS::DynamoDB::Table');
  if (tables.length !== 1) throw new Error(`The rehearsal runs one table; the assembly has ${tables.length}.`);
  const [{ stack, logicalId }] = tables as [(typeof tables)[number]];
  const props = assembly.resolve(stack, tables[0]!.raw.Properties) as TableProperties;
  const client = new DynamoDBClient({ ...ADMIN, endpoint });
  try {
    let table = await describe(client, tableName);
    if (!table) {
      await client.send(
        new CreateTableCommand({
          TableName: tableName,
          BillingMode: 'PAY_PER_REQUEST',
          KeySchema: props.KeySchema,
          AttributeDefinitions: props.AttributeDefinitions,
          ...(props.GlobalSecondaryIndexes ? { GlobalSecondaryIndexes: props.GlobalSecondaryIndexes } : {}),
          ...(props.StreamSpecification
            ? { StreamSpecification: { StreamEnabled: true, StreamViewType: props.StreamSpecification.StreamViewType } }
            : {}),
        }),
      );
      if (props.TimeToLiveSpecification?.Enabled)
        await client.send(
          new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: props.TimeToLiveSpecification }),
        );
      table = await describe(client, tableName);
    } else {
      checkSameShape(table, props);
      if (props.StreamSpecification && !table.StreamSpecification?.StreamEnabled) {
        await client.send(
          new UpdateTableCommand({
            TableName: tableName,
            StreamSpecification: { StreamEnabled: true, StreamViewType: props.StreamSpecification.StreamViewType },
          }),
        );
        table = await describe(client, tableName);
      }
    }
    const arn = `arn:aws:dynamodb:${assembly.region}:${assembly.account}:table/${tableName}`;
    assembly.setPhysical(stack, logicalId, {
      ref: tableName,
      attributes: { Arn: arn, ...(table?.LatestStreamArn ? { StreamArn: table.LatestStreamArn } : {}) },
    });
  } finally {
    client.destroy();
  }
}

async function describe(client: DynamoDBClient, name: string): Promise<TableDescription | undefined> {
  try {
    return (await client.send(new DescribeTableCommand({ TableName: name }))).Table;
  } catch (error) {
    if (error instanceof ResourceNotFoundException) return undefined;
    throw error;
  }
}

const keysOf = (schema: { AttributeName?: string; KeyType?: string }[] | undefined) =>
  JSON.stringify((schema ?? []).map((k) => [k.AttributeName, k.KeyType]));

function checkSameShape(table: TableDescription, props: TableProperties): void {
  const found = [
    keysOf(table.KeySchema),
    ...(table.GlobalSecondaryIndexes ?? []).map((i) => `${i.IndexName}${keysOf(i.KeySchema)}`).sort(),
  ];
  const wanted = [
    keysOf(props.KeySchema),
    ...(props.GlobalSecondaryIndexes ?? []).map((i) => `${i.IndexName}${keysOf(i.KeySchema)}`).sort(),
  ];
  if (JSON.stringify(found) !== JSON.stringify(wanted))
    throw new Error(
      `The table ${table.TableName} exists with other keys or indexes than the assembly's (${found.join(' ')} vs ` +
        `${wanted.join(' ')}): use another DATA_DIR for the rehearsal.`,
    );
}

/** Sets the physical names of buckets the local S3 holds (by logical id) and of the others (web). */
export function provisionBuckets(assembly: Assembly, names: Record<string, string>): void {
  for (const { stack, logicalId } of assembly.rawResources('AWS::S3::Bucket')) {
    const name = names[logicalId];
    if (!name) continue;
    assembly.setPhysical(stack, logicalId, {
      ref: name,
      attributes: {
        Arn: `arn:aws:s3:::${name}`,
        DomainName: `${name}.s3.amazonaws.com`,
        RegionalDomainName: `${name}.s3.${assembly.region}.amazonaws.com`,
      },
    });
  }
}

/**
 * Runs each Provider-framework custom resource's user function with CloudFormation's Create event,
 * as the framework would (after checking that the framework's role may invoke it), and sets the
 * resource's attributes from the answer's Data.
 */
export async function provisionCustomResources(
  assembly: Assembly,
  invoker: Invoker,
  authorizer: Authorizer,
): Promise<string[]> {
  const made: string[] = [];
  for (const resource of customResources(assembly)) {
    const token = String(assembly.property(resource.stack, resource.logicalId, 'ServiceToken'));
    const framework = invoker.find(token);
    const userArn = framework?.environment.USER_ON_EVENT_FUNCTION_ARN;
    if (!framework || !userArn) {
      made.push(
        `${resource.logicalId} (${resource.type}): not run, its provider is not a CDK Provider framework function`,
      );
      continue;
    }
    const user = invoker.find(userArn);
    if (!user)
      throw new Error(
        `Custom resource ${resource.logicalId}: its provider's function ${userArn} is not in the assembly.`,
      );
    const allowed = await authorizer.authorize(framework.roleArn, 'lambda:InvokeFunction', user.arn);
    if (!allowed.allowed)
      throw new Error(
        `Custom resource ${resource.logicalId}: the provider may not invoke its function: ${allowed.message}`,
      );
    const properties = assembly.resolve(resource.stack, resource.raw.Properties ?? {}) as Record<string, unknown>;
    const answer = (await invoker.invoke(user.key, {
      RequestType: 'Create',
      ServiceToken: token,
      ResponseURL: 'http://127.0.0.1:9/rehearsal',
      StackId: `arn:aws:cloudformation:${assembly.region}:${assembly.account}:stack/${assembly.stackName}/rehearsal`,
      RequestId: `rehearsal-${resource.logicalId}`,
      LogicalResourceId: resource.logicalId,
      ResourceType: resource.type,
      ResourceProperties: properties,
    })) as { PhysicalResourceId?: string; Data?: Record<string, unknown> } | null;
    assembly.setPhysical(resource.stack, resource.logicalId, {
      ref: answer?.PhysicalResourceId ?? resource.logicalId,
      attributes: { ...(answer?.Data ?? {}) },
    });
    made.push(`${resource.logicalId} (${resource.type})`);
  }
  return made;
}

/** Every Custom::* or AWS::CloudFormation::CustomResource but the web bucket's deployments (webBucketFiles). */
function customResources(assembly: Assembly) {
  return assembly
    .allRaw()
    .filter(
      (r) =>
        (r.raw.Type.startsWith('Custom::') || r.raw.Type === 'AWS::CloudFormation::CustomResource') &&
        r.raw.Type !== 'Custom::CDKBucketDeployment',
    )
    .map((r) => ({ ...r, type: r.raw.Type }));
}

/**
 * The files a bucket would hold after its `Custom::CDKBucketDeployment`s ran: each deployment's
 * source assets (folders in cdk.out), filtered by its Include/Exclude, with its system metadata
 * (cache-control). Keyed by object key.
 */
export function webBucketFiles(
  assembly: Assembly,
  bucketLogicalId: string,
): Map<string, { file: string; cacheControl?: string }> {
  const assets = JSON.parse(readFileSync(join(assembly.dir, `${assembly.stackName}.assets.json`), 'utf8')) as {
    files: Record<string, { source: { path: string } }>;
  };
  const files = new Map<string, { file: string; cacheControl?: string }>();
  for (const deployment of assembly.allRaw().filter((r) => r.raw.Type === 'Custom::CDKBucketDeployment')) {
    const props = deployment.raw.Properties as Record<string, unknown>;
    const destination = props.DestinationBucketName as { Ref?: string } | undefined;
    if (destination?.Ref !== bucketLogicalId) continue;
    const include = ((props.Include as string[]) ?? []).map(globPattern);
    const exclude = ((props.Exclude as string[]) ?? []).map(globPattern);
    const cacheControl = (props.SystemMetadata as Record<string, string> | undefined)?.['cache-control'];
    for (const key of props.SourceObjectKeys as string[]) {
      const hash = key.replace(/\.zip$/, '');
      const source = assets.files[hash]?.source.path;
      if (!source || !existsSync(join(assembly.dir, source)))
        throw new Error(`The web deployment's asset ${key} is not in the assembly.`);
      for (const file of walk(join(assembly.dir, source))) {
        const objectKey = relative(join(assembly.dir, source), file).split('\\').join('/');
        // The AWS CLI's sync semantics: excluded unless a later include matches.
        const excluded = exclude.some((re) => re.test(objectKey)) && !include.some((re) => re.test(objectKey));
        if (!excluded) files.set(objectKey, { file, ...(cacheControl ? { cacheControl } : {}) });
      }
    }
  }
  return files;
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}
