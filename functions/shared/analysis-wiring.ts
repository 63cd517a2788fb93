// The composition root, failure-analysis part: the pipeline's repositories, its queue, the rule library, the
// optional model provider (through the SSRF guard; ANALYSIS_ALLOWED_HOSTS), and the log stream it tells. Used by the analyzer (the queue's consumer), the admin
// endpoints, and the targets function (a failed command's completion asks for an analysis).
import type { AdminAnalysisDeps } from '../http/admin/analysis-endpoints.js';
import { analyzeFailure } from '../../domain/analysis/analyze.js';
import { analysisLogEvent, type AnalysisDeps } from '../../domain/analysis/pipeline.js';
import { RULE_SET_VERSION } from '../../domain/analysis/rules.js';
import { openAiCompatibleProvider, providerUrlPolicy } from '../../infra/analysis/openai-provider.js';
import {
  DynamoAnalysisRequestRepository,
  DynamoAnalysisSettingsStore,
} from '../../infra/dynamodb/analysis-repository.js';
import { DynamoCommandRepository } from '../../infra/dynamodb/command-repository.js';
import { DynamoDeploymentRepository } from '../../infra/dynamodb/deployment-repository.js';
import { parseAllowedHosts } from '../../infra/net/address-policy.js';
import { SqsAnalysisQueue } from '../../infra/sqs/analysis-queue.js';
import { secretCipher } from './identity-wiring.js';
import { once } from './once.js';
import { deploymentEvents } from './stream-wiring.js';
import { webhookEvents } from './webhook-events-wiring.js';
import { infra, sqs } from './wiring.js';

export const analysisDeps = once((): AdminAnalysisDeps => {
  const { config: cfg, db, clock } = infra();
  const allowedHosts = parseAllowedHosts(cfg.ANALYSIS_ALLOWED_HOSTS);
  const deps: AnalysisDeps = {
    requests: new DynamoAnalysisRequestRepository(db, cfg.TABLE_NAME),
    queue: new SqsAnalysisQueue(sqs(), cfg.ANALYSIS_QUEUE_URL ?? ''),
    settings: new DynamoAnalysisSettingsStore(db, cfg.TABLE_NAME),
    cipher: secretCipher(),
    commands: new DynamoCommandRepository(db, cfg.TABLE_NAME),
    deployments: new DynamoDeploymentRepository(db, cfg.TABLE_NAME),
    rules: analyzeFailure,
    provider: openAiCompatibleProvider(allowedHosts),
    publish: async (deployment, command, analysis) => {
      await deploymentEvents().appendOnce(deployment.id, [
        analysisLogEvent(deployment, command, analysis, clock.now().toISOString()),
      ]);
    },
    clock,
    webhooks: webhookEvents(),
  };
  return { ...deps, ruleSetVersion: RULE_SET_VERSION, providerUrls: providerUrlPolicy(allowedHosts) };
});

/** Whether failed commands are analysed in this installation (the analysis queue is configured). */
export const analysisConfigured = (): boolean => infra().config.ANALYSIS_QUEUE_URL !== undefined;
