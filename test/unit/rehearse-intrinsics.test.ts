/**
 * The rehearsal's reading of templates (local/rehearse/intrinsics.ts, physical.ts): intrinsic
 * functions as CloudFormation resolves them, and generated names that stay apart when two long
 * logical ids share a prefix (three route functions once resolved to one name).
 */
import { describe, expect, it } from '@jest/globals';
import { resolveValue } from '../../local/rehearse/intrinsics.js';
import type { ResolveContext } from '../../local/rehearse/intrinsics.js';
import { generatedName } from '../../local/rehearse/physical.js';

const context: ResolveContext = {
  pseudo: { 'AWS::Region': 'us-east-1', 'AWS::AccountId': '000000000000', 'AWS::Partition': 'aws' },
  parameter: (name) => (name === 'TableArn' ? 'arn:aws:dynamodb:us-east-1:000000000000:table/t' : undefined),
  hasResource: (id) => ['Queue', 'Fn'].includes(id),
  ref: (id) => `ref-of-${id}`,
  attribute: (id, attribute) => `${id}.${attribute}`,
  condition: (name) => name === 'On',
  mapping: (map, top, second) => (map === 'M' && top === 'a' && second === 'b' ? 'found' : undefined),
};
const resolve = (value: unknown) => resolveValue(value, context);

describe('intrinsic functions', () => {
  it('Ref: resources, parameters and pseudo parameters; unknown names fail', () => {
    expect(resolve({ Ref: 'Queue' })).toBe('ref-of-Queue');
    expect(resolve({ Ref: 'TableArn' })).toBe('arn:aws:dynamodb:us-east-1:000000000000:table/t');
    expect(resolve({ Ref: 'AWS::Region' })).toBe('us-east-1');
    expect(() => resolve({ Ref: 'Nothing' })).toThrow(/Ref Nothing/);
  });

  it('GetAtt in both forms, Join, Select of Split (how CDK names a function URL origin)', () => {
    expect(resolve({ 'Fn::GetAtt': ['Fn', 'Arn'] })).toBe('Fn.Arn');
    expect(resolve({ 'Fn::GetAtt': 'Fn.Arn' })).toBe('Fn.Arn');
    expect(resolve({ 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':x']] })).toBe('arn:aws:x');
    expect(resolve({ 'Fn::Select': [2, { 'Fn::Split': ['/', 'https://abc.lambda-url.on.aws/'] }] })).toBe(
      'abc.lambda-url.on.aws',
    );
    expect(() => resolve({ 'Fn::Select': [5, ['a']] })).toThrow(/out of range/);
  });

  it('Sub: references, attributes, literals and its own variables', () => {
    expect(resolve({ 'Fn::Sub': 'cdk-${AWS::AccountId}-${AWS::Region}' })).toBe('cdk-000000000000-us-east-1');
    expect(resolve({ 'Fn::Sub': '${Fn.Arn}/${!Literal}' })).toBe('Fn.Arn/${Literal}');
    expect(resolve({ 'Fn::Sub': ['${x}-${Queue}', { x: { Ref: 'Fn' } }] })).toBe('ref-of-Fn-ref-of-Queue');
  });

  it('If, conditions, FindInMap and AWS::NoValue dropping a property or an element', () => {
    expect(resolve({ 'Fn::If': ['On', 'yes', 'no'] })).toBe('yes');
    expect(resolve({ 'Fn::If': ['Off', 'yes', 'no'] })).toBe('no');
    expect(resolve({ 'Fn::Equals': ['a', 'a'] })).toBe(true);
    expect(resolve({ 'Fn::FindInMap': ['M', 'a', 'b'] })).toBe('found');
    expect(resolve({ a: { 'Fn::If': ['Off', 1, { Ref: 'AWS::NoValue' }] }, b: 2 })).toEqual({ b: 2 });
    expect(resolve([1, { Ref: 'AWS::NoValue' }, 3])).toEqual([1, 3]);
  });

  it('refuses what has no local meaning, by name', () => {
    expect(() => resolve({ 'Fn::ImportValue': 'x' })).toThrow(/Fn::ImportValue is not supported/);
  });
});

describe('generated names', () => {
  it('stay within 64 characters and apart when long logical ids share their first 55 characters', () => {
    const stack = 'ChatRelay-ApiMessagesNestedStackMessagesNestedStackResource93EC956F-REHEARSAL';
    const names = [
      'PostApiV1ChatsChatidMessagesMessageidCancelBE5A6F50',
      'PostApiV1ChatsChatidMessagesMessageidChunksCF95CBCE',
      'PostApiV1ChatsChatidMessagesMessageidCompleteA54FBB59',
    ].map((id) => generatedName(stack, id));
    expect(new Set(names).size).toBe(3);
    for (const name of names) expect(name.length).toBeLessThanOrEqual(64);
    expect(generatedName(stack, 'X')).toBe(generatedName(stack, 'X'));
  });
});
