// Commands for agents. The command item sits in its target's inbox (gsi1, sparse) while the agent has something
// to learn about it: RUN#... while queued, CANCEL#... once a delivered command must be stopped. Claiming an entry
// is a conditional update that removes it, so two polls (or a retried poll) never both receive one command.
// Output chunks share the command's partition, one item per seq, written only if absent: retries are harmless.
import {
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { FailureAnalysis } from '../../domain/analysis/model.js';
import type { CommandRepository, WholeOutput } from '../../domain/targets/ports.js';
import type { Command, CommandResult, OutputChunk, PushedTo, StoredChunk } from '../../domain/targets/types.js';
import { completingWrite } from './command-completion.js';
import { conditionally, isConditionFailure, whenCondition } from './conditional.js';
import { encryptionIndex } from './encryption-index.js';
import { keys, prefixes } from './keys.js';
import { stripKeys } from './records.js';
import { queryAll } from './query-all.js';

/** Inbox entries looked at per poll; more wait for the next one. */
const INBOX_PAGE = 25;
/** Pages of other installations' unacknowledged pushes one claim reads past to find its own (25 each). */
const OWN_PUSH_PAGES = 8;

const toCommand = (item: Record<string, unknown>): Command => {
  const {
    ttl: _expiry,
    inlineOutput: _output,
    ...command
  } = stripKeys<Command & { ttl?: number; inlineOutput?: unknown }>(item);
  return command;
};

/** Command records live at most this long after their deployment ends (COMMAND_RETENTION_DAYS). */
export const COMMAND_RETENTION_DAYS = 7;

export class DynamoCommandRepository implements CommandRepository {
  /**
   * Every command item and output chunk expires (DynamoDB TTL, attribute `ttl`) `expireAfterSeconds` after it was
   * written: the deployment ceiling (a deployment cannot run longer, DEPLOYMENT_MAX_SECONDS) plus the retention,
   * so a record outlives its deployment's end by at least COMMAND_RETENTION_DAYS, with no extra write at the end.
   */
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly expireAfterSeconds: number = 604_800 + COMMAND_RETENTION_DAYS * 86_400,
  ) {}

  private expiry(at: string | Date): number {
    return Math.ceil(new Date(at).getTime() / 1000) + this.expireAfterSeconds;
  }

  async enqueue(command: Command): Promise<void> {
    // Created only if absent: an engine pass that is repeated enqueues the same command id again, harmlessly.
    await whenCondition(
      this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            ...keys.command(command.id),
            ...keys.agentInbox(command.targetId, 'RUN', command.createdAt, command.id),
            ...keys.deploymentCommands(command.deploymentId, command.createdAt, command.id),
            type: 'command',
            ...command,
            ...encryptionIndex('command', command, keys.command(command.id)),
            ttl: this.expiry(command.createdAt),
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    );
  }

  async enqueuePushed(command: Command, to: PushedTo): Promise<boolean> {
    // Claimed for the connection in the same write that stores it: no other claim can take it (it is not RUN#).
    return conditionally(
      this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            ...keys.command(command.id),
            ...keys.agentInbox(command.targetId, 'PUSHED', command.createdAt, command.id),
            ...keys.deploymentCommands(command.deploymentId, command.createdAt, command.id),
            type: 'command',
            ...command,
            status: 'delivered',
            deliveredAt: to.at,
            pushedTo: to,
            ...encryptionIndex('command', command, keys.command(command.id)),
            ttl: this.expiry(command.createdAt),
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    );
  }

  async unpush(command: Command, connectionId: string): Promise<boolean> {
    const queued = keys.agentInbox(command.targetId, 'RUN', command.createdAt, command.id);
    return conditionally(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.command(command.id),
          UpdateExpression: 'SET #status = :queued, deliveredAt = :null, gsi1pk = :pk, gsi1sk = :sk REMOVE pushedTo',
          ConditionExpression:
            '#status = :delivered AND pushedTo.connectionId = :connection AND begins_with(gsi1sk, :pushed)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':queued': 'queued',
            ':delivered': 'delivered',
            ':null': null,
            ':pk': queued.gsi1pk,
            ':sk': queued.gsi1sk,
            ':connection': connectionId,
            ':pushed': prefixes.inboxPushed,
          },
        }),
      ),
    );
  }

  async acknowledgePush(commandId: string): Promise<void> {
    await conditionally(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.command(commandId),
          UpdateExpression: 'REMOVE gsi1pk, gsi1sk, pushedTo',
          ConditionExpression: 'begins_with(gsi1sk, :pushed)',
          ExpressionAttributeValues: { ':pushed': prefixes.inboxPushed },
        }),
      ),
    );
  }

  async get(id: string): Promise<Command | undefined> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: keys.command(id), ConsistentRead: true }),
    );
    return Item === undefined ? undefined : toCommand(Item);
  }

  async listByDeployment(deploymentId: string): Promise<readonly Command[]> {
    const items = await queryAll(this.db, {
      TableName: this.tableName,
      IndexName: 'gsi2',
      KeyConditionExpression: 'gsi2pk = :deployment',
      ExpressionAttributeValues: { ':deployment': keys.deploymentCommands(deploymentId, '', '').gsi2pk },
    });
    return items.map(toCommand);
  }

  async claimInbox(
    targetId: string,
    max: number,
    at: Date,
    instance?: string,
  ): Promise<{ commands: readonly Command[]; cancel: readonly string[] }> {
    const inbox = keys.agentInbox(targetId, 'RUN', '', '').gsi1pk;
    const page = (prefix: string | undefined, after?: Record<string, unknown>, instanceOnly = false) =>
      this.db.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: 'gsi1',
          KeyConditionExpression:
            prefix === undefined ? 'gsi1pk = :inbox' : 'gsi1pk = :inbox AND begins_with(gsi1sk, :prefix)',
          ...(instanceOnly
            ? {
                FilterExpression: 'pushedTo.#instance = :instance',
                ExpressionAttributeNames: { '#instance': 'instance' },
              }
            : {}),
          ExpressionAttributeValues: {
            ':inbox': inbox,
            ...(prefix === undefined ? {} : { ':prefix': prefix }),
            ...(instanceOnly ? { ':instance': instance } : {}),
          },
          Limit: INBOX_PAGE,
          ...(after === undefined ? {} : { ExclusiveStartKey: after }),
        }),
      );
    /** This installation's unacknowledged pushes, past any number of other installations' (pages of the filter). */
    const ownPushes = async () => {
      const own: Record<string, unknown>[] = [];
      let after: Record<string, unknown> | undefined;
      for (let pages = 0; pages < OWN_PUSH_PAGES && own.length < max; pages += 1) {
        const found = await page(prefixes.inboxPushed, after, true);
        own.push(...(found.Items ?? []));
        after = found.LastEvaluatedKey;
        if (after === undefined) break;
      }
      return own;
    };
    // CANCEL# sorts before PUSHED# and RUN#: stop notices come first; a busy agent (max 0) asks for those only.
    const first = await page(max > 0 ? undefined : prefixes.inboxCancel);
    let Items = first.Items ?? [];
    if (first.LastEvaluatedKey !== undefined && max > 0) {
      // A full page can be all stop notices and pushed commands (unacknowledged, perhaps of another installation
      // that is gone): the queued ones behind them, and this installation's own, are looked up by their prefix.
      const [runs, own] = await Promise.all([page(prefixes.inboxRun), instance === undefined ? [] : ownPushes()]);
      const seen = new Set(Items.map((item) => String(item['gsi1sk'])));
      const more = [...own, ...(runs.Items ?? [])].filter((item) => !seen.has(String(item['gsi1sk'])));
      Items = [...Items, ...more];
    }
    const commands: Command[] = [];
    const cancel: string[] = [];
    for (const item of Items) {
      const seen = String(item['gsi1sk']);
      if (seen.startsWith(prefixes.inboxCancel)) {
        if (await this.takeEntry(String(item['id']), seen)) cancel.push(String(item['id']));
      } else if (seen.startsWith(prefixes.inboxPushed)) {
        // Pushed to this installation and not acknowledged (the push may have been lost): handed to it again.
        const to = item['pushedTo'] as PushedTo | undefined;
        if (instance !== undefined && to?.instance === instance && commands.length < max) {
          const again = await this.redeliver(String(item['id']), seen);
          if (again !== undefined) commands.push(again);
        }
      } else if (commands.length < max) {
        const delivered = await this.deliver(String(item['id']), seen, at);
        if (delivered !== undefined) commands.push(delivered);
      }
    }
    return { commands, cancel };
  }

  private async deliver(id: string, seen: string, at: Date): Promise<Command | undefined> {
    const result = await whenCondition(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.command(id),
          UpdateExpression: 'SET #status = :delivered, deliveredAt = :at REMOVE gsi1pk, gsi1sk',
          ConditionExpression: '#status = :queued AND gsi1sk = :seen',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':delivered': 'delivered',
            ':queued': 'queued',
            ':at': at.toISOString(),
            ':seen': seen,
          },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    return result?.Attributes === undefined ? undefined : toCommand(result.Attributes);
  }

  private async redeliver(id: string, seen: string): Promise<Command | undefined> {
    const result = await whenCondition(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.command(id),
          UpdateExpression: 'REMOVE gsi1pk, gsi1sk, pushedTo',
          ConditionExpression: '#status = :delivered AND gsi1sk = :seen',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':delivered': 'delivered', ':seen': seen },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    return result?.Attributes === undefined ? undefined : toCommand(result.Attributes);
  }

  private takeEntry(id: string, seen: string): Promise<boolean> {
    return conditionally(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.command(id),
          UpdateExpression: 'REMOVE gsi1pk, gsi1sk',
          ConditionExpression: 'gsi1sk = :seen',
          ExpressionAttributeValues: { ':seen': seen },
        }),
      ),
    );
  }

  private raiseAndAcknowledge(commandId: string, seq: number): Promise<boolean> {
    return conditionally(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.command(commandId),
          UpdateExpression: 'SET outputSeq = :seq REMOVE gsi1pk, gsi1sk, pushedTo',
          ConditionExpression: 'outputSeq < :seq AND begins_with(gsi1sk, :pushed)',
          ExpressionAttributeValues: { ':seq': seq, ':pushed': prefixes.inboxPushed },
        }),
      ),
    );
  }

  async appendOutput(
    command: Command,
    chunks: readonly OutputChunk[],
    at: Date,
    options: { readonly acknowledgePush?: boolean; readonly seqRaisedByCompletion?: boolean } = {},
  ): Promise<readonly OutputChunk[]> {
    const receivedAt = at.toISOString();
    const stored = await Promise.all(
      chunks.map((chunk) =>
        conditionally(
          this.db.send(
            new PutCommand({
              TableName: this.tableName,
              Item: {
                ...keys.commandOutput(command.id, chunk.seq),
                type: 'command_output',
                stream: chunk.stream,
                data: chunk.data,
                seq: chunk.seq,
                receivedAt,
                ttl: this.expiry(at),
              },
              ConditionExpression: 'attribute_not_exists(pk)',
            }),
          ),
        ),
      ),
    );
    const highest = Math.max(...chunks.map((c) => c.seq));
    // The completion that carries these raises outputSeq in its own write.
    if (options.seqRaisedByCompletion === true) return chunks.filter((_, i) => stored[i] === true);
    const acknowledge = options.acknowledgePush === true && command.pushedTo !== undefined;
    // A pushed command's first output acknowledges the push in the write that raises outputSeq (one write, not two).
    if (acknowledge && highest > command.outputSeq && (await this.raiseAndAcknowledge(command.id, highest)))
      return chunks.filter((_, i) => stored[i] === true);
    if (acknowledge) await this.acknowledgePush(command.id);
    if (highest > command.outputSeq) {
      await conditionally(
        this.db.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: keys.command(command.id),
            UpdateExpression: 'SET outputSeq = :seq',
            ConditionExpression: 'outputSeq < :seq',
            ExpressionAttributeValues: { ':seq': highest },
          }),
        ),
      );
    }
    return chunks.filter((_, i) => stored[i] === true);
  }

  /** Its chunk items and the output its completion stored inline (one query of the partition), in seq order. */
  async output(commandId: string): Promise<readonly StoredChunk[]> {
    const items = await queryAll(this.db, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.command(commandId).pk },
      ConsistentRead: true,
    });
    const bySeq = new Map<number, StoredChunk>();
    for (const item of items) {
      const sk = String(item['sk']);
      const chunks = sk.startsWith(prefixes.commandOutput)
        ? [item]
        : sk === keys.command(commandId).sk && Array.isArray(item['inlineOutput'])
          ? (item['inlineOutput'] as Record<string, unknown>[])
          : [];
      for (const c of chunks)
        bySeq.set(Number(c['seq']), {
          stream: c['stream'],
          data: c['data'],
          seq: c['seq'],
          receivedAt: c['receivedAt'],
        } as StoredChunk);
    }
    return [...bySeq.values()].sort((a, b) => a.seq - b.seq);
  }

  async complete(commandId: string, result: CommandResult, outputSeq?: number, whole?: WholeOutput): Promise<boolean> {
    return conditionally(
      this.db.send(new UpdateCommand(completingWrite(this.tableName, commandId, result, outputSeq, whole))),
    );
  }

  async completeAs(
    targetId: string,
    commandId: string,
    result: CommandResult,
    outputSeq: number | undefined,
    whole: WholeOutput,
  ): Promise<{ readonly completed: boolean; readonly command: Command | undefined }> {
    try {
      const { Attributes } = await this.db.send(
        new UpdateCommand({
          ...completingWrite(this.tableName, commandId, result, outputSeq, whole, targetId),
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { completed: true, command: Attributes === undefined ? undefined : toCommand(Attributes) };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      // Refused: the item as it was (raw attribute values: the document client converts answers, not errors).
      const item = error.Item as Record<string, AttributeValue> | undefined;
      return { completed: false, command: item === undefined ? undefined : toCommand(unmarshall(item)) };
    }
  }

  /** The failure analysis of a completed command (domain/analysis), shown with its command result. */
  async recordAnalysis(commandId: string, analysis: FailureAnalysis): Promise<void> {
    await conditionally(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.command(commandId),
          UpdateExpression: 'SET analysis = :analysis',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':analysis': analysis },
        }),
      ),
    );
  }

  async requestCancel(command: Command, at: Date): Promise<void> {
    const now = at.toISOString();
    const neverDelivered = await conditionally(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.command(command.id),
          UpdateExpression: 'SET #status = :cancelled, cancelRequestedAt = :now REMOVE gsi1pk, gsi1sk',
          ConditionExpression: '#status = :queued',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':cancelled': 'cancelled', ':queued': 'queued', ':now': now },
        }),
      ),
    );
    if (neverDelivered) return;
    const notice = keys.agentInbox(command.targetId, 'CANCEL', now, command.id);
    await conditionally(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.command(command.id),
          UpdateExpression: 'SET cancelRequestedAt = :now, gsi1pk = :pk, gsi1sk = :sk',
          ConditionExpression: '#status = :delivered AND attribute_type(cancelRequestedAt, :null)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':now': now,
            ':pk': notice.gsi1pk,
            ':sk': notice.gsi1sk,
            ':delivered': 'delivered',
            ':null': 'NULL',
          },
        }),
      ),
    );
  }
}
