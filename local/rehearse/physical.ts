/**
 * The names and attributes CloudFormation would give a resource the rehearsal does not provision
 * itself (a function, a role, a rule, a log group...): a generated physical name of the stack's
 * name and the logical id, and the ARN of that name in the rehearsal's account and region.
 * Provisioned resources (the table, queues, buckets, custom resources, the API's and function
 * URL's endpoints) get their real local values through Assembly.setPhysical instead.
 */
import { createHash } from 'node:crypto';
import { REHEARSAL_ACCOUNT as ACCOUNT, REHEARSAL_REGION as REGION } from './types.js';

export interface Physical {
  /** What Ref gives. */
  ref: string;
  /** What Fn::GetAtt gives, by attribute name. */
  attributes: Record<string, unknown>;
}

/**
 * A generated name as CloudFormation makes them: stack name and logical id, cut to fit `max`
 * characters, then a suffix unique to them (CloudFormation's is random; this one is a hash, so a
 * restart finds the same names), so two long logical ids cut to the same prefix stay apart.
 */
export function generatedName(stackName: string, logicalId: string, max = 64): string {
  const suffix = createHash('sha256').update(`${stackName}/${logicalId}`).digest('hex').slice(0, 12).toUpperCase();
  return `${`${stackName}-${logicalId}`.slice(0, max - suffix.length - 1)}-${suffix}`;
}

export function defaultPhysical(type: string, logicalId: string, stackName: string): Physical {
  const name = generatedName(stackName, logicalId);
  switch (type) {
    case 'AWS::Lambda::Function':
      return { ref: name, attributes: { Arn: `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${name}` } };
    case 'AWS::IAM::Role':
      return { ref: name, attributes: { Arn: `arn:aws:iam::${ACCOUNT}:role/${name}`, RoleId: `AROA${logicalId}` } };
    case 'AWS::IAM::Policy':
      return { ref: name, attributes: { Id: name } };
    case 'AWS::Logs::LogGroup':
      return { ref: name, attributes: { Arn: `arn:aws:logs:${REGION}:${ACCOUNT}:log-group:${name}:*` } };
    case 'AWS::Events::Rule':
      return { ref: name, attributes: { Arn: `arn:aws:events:${REGION}:${ACCOUNT}:rule/${name}` } };
    case 'AWS::StepFunctions::StateMachine': {
      const arn = `arn:aws:states:${REGION}:${ACCOUNT}:stateMachine:${name}`;
      return { ref: arn, attributes: { Arn: arn, Name: name } };
    }
    case 'AWS::SNS::Topic': {
      const arn = `arn:aws:sns:${REGION}:${ACCOUNT}:${name}`;
      return { ref: arn, attributes: { TopicArn: arn, TopicName: name } };
    }
    case 'AWS::S3::Bucket': {
      const bucket = name
        .toLowerCase()
        .replace(/[^a-z0-9-]/g, '-')
        .slice(0, 63);
      return {
        ref: bucket,
        attributes: {
          Arn: `arn:aws:s3:::${bucket}`,
          DomainName: `${bucket}.s3.amazonaws.com`,
          RegionalDomainName: `${bucket}.s3.${REGION}.amazonaws.com`,
        },
      };
    }
    case 'AWS::CloudFront::Function':
      return {
        ref: name,
        attributes: { FunctionARN: `arn:aws:cloudfront::${ACCOUNT}:function/${name}`, Stage: 'LIVE' },
      };
    case 'AWS::CloudFront::Distribution':
      return { ref: 'EREHEARSAL', attributes: { DomainName: 'rehearsal.cloudfront.net', Id: 'EREHEARSAL' } };
    case 'AWS::CloudFront::OriginAccessControl':
    case 'AWS::CloudFront::ResponseHeadersPolicy':
      return { ref: logicalId, attributes: { Id: logicalId } };
    case 'AWS::Lambda::LayerVersion':
      return { ref: `arn:aws:lambda:${REGION}:${ACCOUNT}:layer:${name}:1`, attributes: {} };
    case 'AWS::CloudWatch::Alarm':
      return { ref: name, attributes: { Arn: `arn:aws:cloudwatch:${REGION}:${ACCOUNT}:alarm:${name}` } };
    default:
      return { ref: name, attributes: {} };
  }
}
