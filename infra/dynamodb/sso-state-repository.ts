// SignInStates: one item per sign-in in flight, consumed by a conditional delete (a replayed callback, or two racing
// ones, find nothing: exactly one wins). TTL removes abandoned sign-ins.
import { DeleteCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SignInStates } from '../../domain/sso/ports.js';
import type { SignInState } from '../../domain/sso/types.js';
import { whenCondition } from './conditional.js';
import { keys } from './keys.js';
import { stripKeys } from './records.js';

export class DynamoSignInStates implements SignInStates {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async put(state: SignInState): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: {
          ...keys.ssoState(state.stateHash),
          type: 'sso_state',
          ...state,
          ttl: Math.ceil(state.expiresAt / 1000) + 3600,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  async consume(stateHash: string, now: Date): Promise<SignInState | undefined> {
    const deleted = await whenCondition(
      this.db.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: keys.ssoState(stateHash),
          ConditionExpression: 'attribute_exists(pk) AND expiresAt > :now',
          ExpressionAttributeValues: { ':now': now.getTime() },
          ReturnValues: 'ALL_OLD',
        }),
      ),
    );
    if (deleted?.Attributes === undefined) return undefined;
    const {
      ttl: _ttl,
      type: _type,
      ...state
    } = stripKeys<SignInState & { ttl?: number; type?: string }>(deleted.Attributes);
    return state;
  }
}
