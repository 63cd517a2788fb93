// Structured JSON logs (Powertools). Level from POWERTOOLS_LOG_LEVEL / LOG_LEVEL. Never log bodies or headers:
// they carry passwords, tokens and keys.
import { Logger } from '@aws-lambda-powertools/logger';

export const logger = new Logger({ serviceName: 'deployer' });
