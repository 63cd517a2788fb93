import type { User } from './types.js';

/**
 * How a person is shown in place of their id (a deployment's `triggered_by_name`): the display name when it has any
 * visible character, else the username (always set, unique, and less personal than the email, which is not shown).
 */
export const personName = (user: Pick<User, 'displayName' | 'username'>): string => {
  const display = user.displayName?.trim() ?? '';
  return display === '' ? user.username : display;
};
