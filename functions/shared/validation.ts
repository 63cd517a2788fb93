// valibot issues -> ValidationError with one FieldProblem per field (MISSING_FIELD for absent required ones).
import * as v from 'valibot';
import { ValidationError, type FieldProblem } from '../../domain/errors.js';

const isMissing = (issue: v.BaseIssue<unknown>): boolean => {
  const last = issue.path?.at(-1);
  if (issue.input !== undefined || last === undefined || last.type !== 'object') return false;
  const parent = last.input;
  return typeof parent === 'object' && parent !== null && !Object.hasOwn(parent, last.key as PropertyKey);
};

export const toFieldProblems = (issues: readonly v.BaseIssue<unknown>[], root: string): FieldProblem[] => {
  const seen = new Set<string>();
  const problems: FieldProblem[] = [];
  for (const issue of issues) {
    const path = v.getDotPath(issue);
    const field = path === null ? root : path;
    if (seen.has(field)) continue; // the first problem of a field is the one worth reading
    seen.add(field);
    const missing = isMissing(issue);
    problems.push({
      field,
      code: missing ? 'MISSING_FIELD' : 'VALIDATION_ERROR',
      message: missing ? `${field} is required.` : issue.message,
    });
  }
  return problems;
};

/** Parses `input` with `schema`, or throws a ValidationError naming every bad field. */
export const parseWith = <S extends v.GenericSchema>(schema: S, input: unknown, root: string): v.InferOutput<S> => {
  const result = v.safeParse(schema, input, { abortPipeEarly: true });
  if (result.success) return result.output;
  const fields = toFieldProblems(result.issues, root);
  const summary = fields.map((f) => f.field).join(', ');
  throw new ValidationError(`Invalid ${root}: ${summary}.`, fields);
};
