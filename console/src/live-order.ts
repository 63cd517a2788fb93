// One deployment's events in order, as a live view applies them (issue 36). Seqs are contiguous from 1: an event at
// or below the last applied is a duplicate (dropped), one past the next is early (held until the gap fills).
// Pure: the channel (live-channel.ts) decides what to do about a gap that stays open (subscribe again from `last`).
import { TERMINAL_STATES } from './format.js';

/** One event as the viewer channel sends it: its seq and the log stream's message. */
export interface SeqEvent {
  readonly id: number;
  readonly event: string;
  readonly data: Record<string, unknown>;
}

export interface Order {
  /** The last seq applied (0: none). */
  readonly last: number;
  /** Events received past a gap, by seq. */
  readonly held: ReadonlyMap<number, SeqEvent>;
}

export const startOrder = (last = 0): Order => ({ last, held: new Map() });

/** Received events: those to apply now (in seq order, each once) and the order after them; `gap` when some wait. */
export const receive = (
  order: Order,
  events: readonly SeqEvent[],
): { readonly order: Order; readonly apply: readonly SeqEvent[]; readonly gap: boolean } => {
  const held = new Map(order.held);
  for (const e of events) if (Number.isInteger(e.id) && e.id > order.last && !held.has(e.id)) held.set(e.id, e);
  const apply: SeqEvent[] = [];
  let last = order.last;
  for (let next = held.get(last + 1); next !== undefined; next = held.get(last + 1)) {
    apply.push(next);
    held.delete(next.id);
    last = next.id;
  }
  return { order: { last, held }, apply, gap: held.size > 0 };
};

/** The deployment's end: a state_change to a terminal state (nothing follows it). */
export const isEnd = (e: Pick<SeqEvent, 'event' | 'data'>): boolean =>
  e.event === 'state_change' && TERMINAL_STATES.has(String(e.data['new_state']));
