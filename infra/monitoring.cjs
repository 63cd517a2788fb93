// What tells an operator something is wrong (docs/cloud.md, "When something is wrong"): alarms on one SNS topic
// (AlarmTopic; an e-mail subscription when deployed with --param="alarmEmail=ops@example.com"), and one CloudWatch
// dashboard. Generated from the functions serverless.yml declares, so a new function gets its alarms without an edit:
// - each dead-letter queue holding any message (a message failed every retry and waits for a human);
// - each function's Errors and Throttles (any, in a minute);
// - the HTTP API answering 5xx to more than 5 % of at least 20 requests in 5 minutes;
// - the sweep failing three minutes in a row (the safety net itself is down).
// X-Ray tracing is --param="tracing=true" (provider.tracing.lambda; each role then gets the two X-Ray calls, which
// take no resource: infra/iam.yml, condition TracingEnabled).
'use strict';

/** The dead-letter queues of infra/resources.yml (each queue's RedrivePolicy target; the template test checks). */
const DEAD_LETTER_QUEUES = [
  'DispatchDeadLetterQueue',
  'OrchestratorDeadLetterQueue',
  'AnalysisDeadLetterQueue',
  'WebhookDeadLetterQueue',
];
/** The queues the consumers read (their depth on the dashboard). */
const QUEUES = ['DispatchQueue', 'OrchestratorQueue', 'AnalysisQueue', 'WebhookQueue'];
/** The business metrics (infra/metrics.ts), their namespace and the dimension Powertools adds. */
const METRICS_NAMESPACE = 'Deployer';
const BUSINESS_METRICS = [
  'DeploymentsStarted',
  'DeploymentsSucceeded',
  'DeploymentsFailed',
  'DeploymentsCancelled',
  'DispatchLatency',
  'AgentsConnected',
];

/** serverless's logical id prefix of a function: `notFound` -> `NotFound`. */
const logicalPrefix = (name) => name.charAt(0).toUpperCase() + name.slice(1);

const topicActions = { AlarmActions: [{ Ref: 'AlarmTopic' }], OKActions: [{ Ref: 'AlarmTopic' }] };

const alarm = (description, props) => ({
  Type: 'AWS::CloudWatch::Alarm',
  Properties: {
    AlarmDescription: description,
    ComparisonOperator: 'GreaterThanThreshold',
    Threshold: 0,
    TreatMissingData: 'notBreaching',
    ...topicActions,
    ...props,
  },
});

const lambdaAlarm = (functionName, metric, what) =>
  alarm(`${functionName}: ${what} (docs/cloud.md, "When something is wrong")`, {
    Namespace: 'AWS/Lambda',
    MetricName: metric,
    Dimensions: [{ Name: 'FunctionName', Value: { Ref: `${logicalPrefix(functionName)}LambdaFunction` } }],
    Statistic: 'Sum',
    Period: 60,
    EvaluationPeriods: 1,
  });

/** The dashboard's body: CloudFormation substitutes the ${...} (Fn::Sub) with the stack's names. */
const dashboardBody = (functionNames, service, stage) => {
  const fnName = (name) => `${service}-${stage}-${name}`;
  const widget = (title, metrics, extra = {}) => ({
    type: 'metric',
    width: 12,
    height: 6,
    properties: { title, region: '${AWS::Region}', view: 'timeSeries', period: 60, metrics, ...extra },
  });
  return JSON.stringify({
    widgets: [
      widget('API requests and 5xx', [
        ['AWS/ApiGateway', 'Count', 'ApiId', '${HttpApi}', { stat: 'Sum' }],
        ['AWS/ApiGateway', '5xx', 'ApiId', '${HttpApi}', { stat: 'Sum' }],
        ['AWS/ApiGateway', '4xx', 'ApiId', '${HttpApi}', { stat: 'Sum' }],
      ]),
      widget('API latency', [
        ['AWS/ApiGateway', 'Latency', 'ApiId', '${HttpApi}', { stat: 'p50' }],
        ['AWS/ApiGateway', 'Latency', 'ApiId', '${HttpApi}', { stat: 'p99' }],
      ]),
      widget(
        'Queue depths (dead-letter queues should be 0)',
        [...QUEUES, ...DEAD_LETTER_QUEUES].map((q) => [
          'AWS/SQS',
          'ApproximateNumberOfMessagesVisible',
          'QueueName',
          `\${${q}.QueueName}`,
          { stat: 'Maximum' },
        ]),
        { period: 300 },
      ),
      widget(
        'Function errors',
        functionNames.map((name) => ['AWS/Lambda', 'Errors', 'FunctionName', fnName(name), { stat: 'Sum' }]),
      ),
      widget(
        'Function throttles',
        functionNames.map((name) => ['AWS/Lambda', 'Throttles', 'FunctionName', fnName(name), { stat: 'Sum' }]),
      ),
      widget(
        'Deployments',
        ['DeploymentsStarted', 'DeploymentsSucceeded', 'DeploymentsFailed', 'DeploymentsCancelled'].map((m) => [
          METRICS_NAMESPACE,
          m,
          'service',
          `${service}-${stage}`,
          { stat: 'Sum' },
        ]),
        { period: 300 },
      ),
      widget('Dispatch latency (ms) and agents connecting', [
        [METRICS_NAMESPACE, 'DispatchLatency', 'service', `${service}-${stage}`, { stat: 'p90' }],
        [METRICS_NAMESPACE, 'AgentsConnected', 'service', `${service}-${stage}`, { stat: 'Sum', yAxis: 'right' }],
      ]),
    ],
  });
};

/** The CloudFormation fragment (Conditions, Resources, Outputs) for these functions. */
const monitoringFor = ({ service, stage, functionNames, alarmEmail, tracing }) => {
  const resources = {
    AlarmTopic: {
      Type: 'AWS::SNS::Topic',
      Properties: { TopicName: `${service}-${stage}-alarms`, DisplayName: `${service} ${stage} alarms` },
    },
    AlarmEmailSubscription: {
      Type: 'AWS::SNS::Subscription',
      Condition: 'HasAlarmEmail',
      Properties: { TopicArn: { Ref: 'AlarmTopic' }, Protocol: 'email', Endpoint: alarmEmail },
    },
  };
  for (const queue of DEAD_LETTER_QUEUES)
    resources[`${queue}Alarm`] = alarm(`${queue}: messages that failed every retry wait for a human`, {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queue, 'QueueName'] } }],
      Statistic: 'Maximum',
      Period: 300,
      EvaluationPeriods: 1,
    });
  for (const name of functionNames) {
    resources[`${logicalPrefix(name)}ErrorsAlarm`] = lambdaAlarm(name, 'Errors', 'invocations failed');
    resources[`${logicalPrefix(name)}ThrottlesAlarm`] = lambdaAlarm(name, 'Throttles', 'invocations throttled');
  }
  resources.ApiServerErrorRateAlarm = alarm(
    'HTTP API: more than 5 % of requests answered 5xx over 5 minutes (at least 20 requests)',
    {
      Threshold: 5,
      EvaluationPeriods: 1,
      Metrics: [
        {
          Id: 'errors',
          ReturnData: false,
          MetricStat: {
            Metric: {
              Namespace: 'AWS/ApiGateway',
              MetricName: '5xx',
              Dimensions: [{ Name: 'ApiId', Value: { Ref: 'HttpApi' } }],
            },
            Period: 300,
            Stat: 'Sum',
          },
        },
        {
          Id: 'requests',
          ReturnData: false,
          MetricStat: {
            Metric: {
              Namespace: 'AWS/ApiGateway',
              MetricName: 'Count',
              Dimensions: [{ Name: 'ApiId', Value: { Ref: 'HttpApi' } }],
            },
            Period: 300,
            Stat: 'Sum',
          },
        },
        { Id: 'rate', Label: '5xx %', ReturnData: true, Expression: 'IF(requests >= 20, 100 * errors / requests, 0)' },
      ],
    },
  );
  if (functionNames.includes('sweep'))
    resources.SweepFailingAlarm = alarm(
      'sweep: failed three minutes in a row; recovery and dispatch wake-ups stopped',
      {
        Namespace: 'AWS/Lambda',
        MetricName: 'Errors',
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: 'SweepLambdaFunction' } }],
        Statistic: 'Sum',
        Period: 60,
        EvaluationPeriods: 3,
        DatapointsToAlarm: 3,
      },
    );
  resources.Dashboard = {
    Type: 'AWS::CloudWatch::Dashboard',
    Properties: {
      DashboardName: `${service}-${stage}`,
      DashboardBody: { 'Fn::Sub': dashboardBody(functionNames, service, stage) },
    },
  };
  return {
    Conditions: {
      HasAlarmEmail: { 'Fn::Not': [{ 'Fn::Equals': [alarmEmail, ''] }] },
      TracingEnabled: { 'Fn::Equals': [String(tracing), 'true'] },
    },
    Resources: resources,
    Outputs: {
      AlarmTopicArn: {
        Description: 'Where the alarms go (subscribe more endpoints to it)',
        Value: { Ref: 'AlarmTopic' },
      },
    },
  };
};

module.exports = {
  resources: async ({ resolveVariable }) => {
    const alarmEmail = String(await resolveVariable("param:alarmEmail, ''")).trim();
    if (alarmEmail !== '' && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(alarmEmail))
      throw new Error(`alarmEmail: ${JSON.stringify(alarmEmail)} is not an e-mail address`);
    const tracing = String(await resolveVariable("param:tracing, 'false'")).trim();
    if (tracing !== 'true' && tracing !== 'false')
      throw new Error(`tracing: ${JSON.stringify(tracing)} is not true or false`);
    return monitoringFor({
      tracing: tracing === 'true',
      service: await resolveVariable('self:service'),
      stage: await resolveVariable('sls:stage'),
      functionNames: Object.keys(await resolveVariable('self:functions')),
      alarmEmail,
    });
  },
  monitoringFor,
  DEAD_LETTER_QUEUES,
  BUSINESS_METRICS,
  METRICS_NAMESPACE,
};
