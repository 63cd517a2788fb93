// The template checker of tests/integration/service/template-schema.ts finds what CloudFormation would refuse: an
// unknown type or property (also nested), a missing required property, a literal of the wrong type, a Ref or
// Fn::GetAtt to nothing, an attribute the type does not have; and passes a correct template.
import { describe, expect, it } from 'vitest';
import { templateSchemaProblems, type Template } from '../../integration/service/template-schema.js';

const good: Template = {
  Parameters: { AlarmEmail: { Type: 'String' } },
  Resources: {
    Queue: { Type: 'AWS::SQS::Queue', Properties: { VisibilityTimeout: 60, MessageRetentionPeriod: '1209600' } },
    Mapping: {
      Type: 'AWS::Lambda::EventSourceMapping',
      Properties: {
        FunctionName: { Ref: 'AWS::StackName' },
        EventSourceArn: { 'Fn::GetAtt': ['Queue', 'Arn'] },
        ScalingConfig: { MaximumConcurrency: 2 },
      },
      DependsOn: ['Queue'],
    },
    Topic: {
      Type: 'AWS::SNS::Topic',
      Properties: { Subscription: [{ Protocol: 'email', Endpoint: { Ref: 'AlarmEmail' } }] },
    },
  },
};

const withResource = (id: string, resource: Template['Resources'][string]): Template => ({
  ...good,
  Resources: { ...good.Resources, [id]: resource },
});

describe('templateSchemaProblems', () => {
  it('passes a template that follows the schemas', () => {
    expect(templateSchemaProblems(good)).toEqual([]);
  });

  it('finds an unknown type, an unknown property and an unknown nested property', () => {
    expect(templateSchemaProblems(withResource('X', { Type: 'AWS::SQS::Queues' }))).toEqual([
      'X: AWS::SQS::Queues is not a CloudFormation resource type',
    ]);
    expect(
      templateSchemaProblems(withResource('Queue', { Type: 'AWS::SQS::Queue', Properties: { Visibility: 60 } })),
    ).toEqual(['Queue.Visibility: not a property of this type']);
    const nested = templateSchemaProblems(
      withResource('Mapping', {
        Type: 'AWS::Lambda::EventSourceMapping',
        Properties: { FunctionName: 'f', ScalingConfig: { MaxConcurrency: 2 } },
      }),
    );
    expect(nested).toEqual(['Mapping.ScalingConfig.MaxConcurrency: not a property of this type']);
  });

  it('finds a missing required property and a literal of the wrong type', () => {
    expect(
      templateSchemaProblems(withResource('Mapping', { Type: 'AWS::Lambda::EventSourceMapping', Properties: {} })),
    ).toContain('Mapping.FunctionName: required');
    expect(
      templateSchemaProblems(
        withResource('Queue', { Type: 'AWS::SQS::Queue', Properties: { VisibilityTimeout: 'a minute' } }),
      ),
    ).toEqual(['Queue.VisibilityTimeout: expected an integer']);
    expect(
      templateSchemaProblems(withResource('Topic', { Type: 'AWS::SNS::Topic', Properties: { Subscription: {} } })),
    ).toEqual(['Topic.Subscription: expected a list']);
  });

  it('finds a Ref or Fn::GetAtt to nothing, an attribute the type lacks, and a DependsOn to nothing', () => {
    const broken = withResource('Mapping', {
      Type: 'AWS::Lambda::EventSourceMapping',
      Properties: { FunctionName: { Ref: 'Nope' }, EventSourceArn: { 'Fn::GetAtt': ['Queue', 'StreamArn'] } },
      DependsOn: 'Gone',
    });
    expect(templateSchemaProblems(broken).sort()).toEqual(
      [
        'Mapping.DependsOn: no resource Gone',
        'Resources.Mapping.Properties.FunctionName: Ref to unknown Nope',
        'Resources.Mapping.Properties.EventSourceArn: AWS::SQS::Queue has no attribute StreamArn',
      ].sort(),
    );
  });
});
