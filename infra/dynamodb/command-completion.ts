// The command's completing write (command-repository.ts): delivered -> completed, with what the completion carried
// (its output's highest seq, its whole output's tail and, when small, the output itself), conditioned on the command
// being delivered, on outputSeq as the caller found it, and, for a completion that did not read the command first,
// on it being the reporting agent's target's.
import type { UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import type { WholeOutput } from '../../domain/targets/ports.js';
import type { CommandResult } from '../../domain/targets/types.js';
import { keys } from './keys.js';

/** The completing write: delivered -> completed (of `targetId`'s command only, when given). */
export const completingWrite = (
  tableName: string,
  commandId: string,
  result: CommandResult,
  outputSeq?: number,
  whole?: WholeOutput,
  targetId?: string,
): UpdateCommandInput => {
  const conditions = ['#status = :delivered'];
  const sets = ['#status = :completed', '#result = :result'];
  if (targetId !== undefined) conditions.push('targetId = :target');
  if (outputSeq !== undefined) {
    conditions.push('outputSeq < :seq');
    sets.push('outputSeq = :seq');
  }
  if (whole !== undefined) {
    conditions.push('outputSeq = :seqWas');
    sets.push('outputTail = :tail');
    if (whole.chunks !== undefined && whole.chunks.length > 0) sets.push('inlineOutput = :inline');
  }
  return {
    TableName: tableName,
    Key: keys.command(commandId),
    UpdateExpression: `SET ${sets.join(', ')} REMOVE gsi1pk, gsi1sk, pushedTo`,
    ConditionExpression: conditions.join(' AND '),
    ExpressionAttributeNames: { '#status': 'status', '#result': 'result' },
    ExpressionAttributeValues: {
      ':completed': 'completed',
      ':delivered': 'delivered',
      ':result': result,
      ...(targetId === undefined ? {} : { ':target': targetId }),
      ...(outputSeq === undefined ? {} : { ':seq': outputSeq }),
      ...(whole === undefined ? {} : { ':tail': whole.tail, ':seqWas': whole.seqWas }),
      ...(whole?.chunks === undefined || whole.chunks.length === 0
        ? {}
        : {
            ':inline': whole.chunks.map((c) => ({
              stream: c.stream,
              data: c.data,
              seq: c.seq,
              receivedAt: whole.receivedAt ?? result.completedAt,
            })),
          }),
    },
  };
};
