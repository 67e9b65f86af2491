import { describe, expect, it } from 'vitest';
import {
  type PhysicalResource,
  type ResolveContext,
  resolveString,
  resolveValue,
  UnresolvedReference,
} from '../../../testing/local/intrinsics';

const queue: PhysicalResource = {
  type: 'AWS::SQS::Queue',
  ref: 'http://127.0.0.1:5000/123456789012/jobs-ab12cd',
  attributes: { Arn: 'arn:aws:sqs:us-east-1:123456789012:jobs-ab12cd', QueueName: 'jobs-ab12cd' },
};
const context: ResolveContext = {
  resources: new Map([['Queue', queue]]),
  types: new Map([
    ['Queue', 'AWS::SQS::Queue'],
    ['Secret', 'AWS::SecretsManager::Secret'],
  ]),
  parameters: { 'AWS::Region': 'us-east-1', Stage: 'dev' },
};

describe('Function: resolveValue', () => {
  it('answers Ref with the local physical id, a parameter or a pseudo parameter', () => {
    expect(resolveValue({ Ref: 'Queue' }, context)).toBe(queue.ref);
    expect(resolveValue({ Ref: 'Stage' }, context)).toBe('dev');
    expect(resolveValue({ Ref: 'AWS::Region' }, context)).toBe('us-east-1');
  });

  it('answers Fn::GetAtt in both of its forms', () => {
    expect(resolveValue({ 'Fn::GetAtt': ['Queue', 'Arn'] }, context)).toBe(queue.attributes.Arn);
    expect(resolveValue({ 'Fn::GetAtt': 'Queue.QueueName' }, context)).toBe('jobs-ab12cd');
  });

  it("evaluates the trigger's WORKERS, a Fn::Join of a worker queue's URL", () => {
    const workers = {
      'Fn::Join': ['', ['{"occurrence-digest":{"queueUrl":"', { Ref: 'Queue' }, '","stuckAfterSeconds":1200}}']],
    };
    expect(JSON.parse(resolveString(workers, context))).toEqual({
      'occurrence-digest': { queueUrl: queue.ref, stuckAfterSeconds: 1200 },
    });
  });

  it('evaluates Fn::Sub (names, attributes, its own variables, an escaped literal), Fn::Select and Fn::Split', () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: CloudFormation's Fn::Sub syntax
    expect(resolveValue({ 'Fn::Sub': '${Queue.Arn}|${AWS::Region}|${!Literal}' }, context)).toBe(
      `${queue.attributes.Arn}|us-east-1|\${Literal}`,
    );
    // biome-ignore lint/suspicious/noTemplateCurlyInString: CloudFormation's Fn::Sub syntax
    expect(resolveValue({ 'Fn::Sub': ['${Name}-x', { Name: { Ref: 'Stage' } }] }, context)).toBe('dev-x');
    expect(
      resolveValue({ 'Fn::Select': [1, { 'Fn::Split': [':', { 'Fn::GetAtt': ['Queue', 'Arn'] }] }] }, context),
    ).toBe('aws');
  });

  it('resolves inside lists and objects, and leaves literals alone', () => {
    expect(resolveValue({ a: [{ Ref: 'Stage' }, 3], b: true }, context)).toEqual({ a: ['dev', 3], b: true });
    expect(resolveString(900, context)).toBe('900');
  });

  it('names what it cannot answer: a resource it does not create, an attribute it lacks, a function it lacks', () => {
    expect(() => resolveValue({ Ref: 'Secret' }, context)).toThrow(
      new UnresolvedReference('Ref to Secret (AWS::SecretsManager::Secret), which the local run does not create'),
    );
    expect(() => resolveValue({ Ref: 'Nope' }, context)).toThrow('Ref to Nope, which is not in the template');
    expect(() => resolveValue({ 'Fn::GetAtt': ['Queue', 'Foo'] }, context)).toThrow(
      'Fn::GetAtt Queue.Foo: the local AWS::SQS::Queue has Arn, QueueName',
    );
    expect(() => resolveValue({ 'Fn::ImportValue': 'shared' }, context)).toThrow(
      'Fn::ImportValue, which the local run does not evaluate',
    );
  });
});
