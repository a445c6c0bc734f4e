/**
 * The stateful part of the stack: the single DynamoDB table, its keys and indexes taken from
 * lib/table-schema.ts (the local runtime creates the very same table from it). Retained on
 * stack deletion; compute around it is rebuilt freely from the route table.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, StreamViewType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { tableSchema } from '../table-schema.js';
import type { IndexSchema } from '../table-schema.js';

export class Storage extends Construct {
  readonly table: Table;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    // Table (AWS::DynamoDB::Table), not TableV2 (AWS::DynamoDB::GlobalTable): one region, no
    // replicas, and the same resource type the local runtime creates with CreateTable.
    this.table = new Table(this, 'Table', {
      partitionKey: { name: tableSchema.partitionKey, type: AttributeType.STRING },
      sortKey: { name: tableSchema.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: tableSchema.ttlAttribute,
      // Read by the search index writer and the events' side effects (lib/stream-mappings.ts).
      stream: StreamViewType[tableSchema.streamViewType],
      removalPolicy: RemovalPolicy.RETAIN,
      // Retained on stack deletion, and DeleteTable itself refuses until protection is turned off.
      deletionProtection: true,
    });

    const indexes: readonly IndexSchema[] = tableSchema.indexes;
    for (const index of indexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.indexName,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: { name: index.sortKey, type: AttributeType.STRING },
        ...(index.include
          ? { projectionType: ProjectionType.INCLUDE, nonKeyAttributes: [...index.include] }
          : { projectionType: ProjectionType.ALL }),
      });
    }
  }
}
