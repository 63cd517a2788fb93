// How the plan reports what does not resolve: field problems gathered and thrown as one ValidationError (400).
import { ValidationError, type FieldProblem } from '../../errors.js';

export const problem = (field: string, message: string): FieldProblem => ({ field, code: 'VALIDATION_ERROR', message });

export const invalid = (problems: readonly FieldProblem[], message = 'The deployment is not valid.'): void => {
  if (problems.length > 0)
    throw new ValidationError(`${message} ${problems.map((p) => p.message).join(' ')}`, problems);
};

export const fail = (field: string, message: string): never => {
  throw new ValidationError(message, [problem(field, message)]);
};
