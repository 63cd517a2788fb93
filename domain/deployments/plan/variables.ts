// Step 4 of a plan, the variables: action defaults < body `variables` < `prompted_values`; a required one without
// a value is a 400; secret ones are sealed wherever they are kept.
//
// Only variables the plan's action versions declare reach a command, and no name may change how a program starts
// (protocol/environment-names.ts). Every key of `variables` and `prompted_values` is checked: a bad name or an
// undeclared one is a 400 on `variables.<NAME>` / `prompted_values.<NAME>`. A version stored before the rule that
// declares a bad name refuses the plan (400 on the source field). Lookups go through Maps: `valueOf` or
// `constructor` are ordinary names, never Object.prototype's.
import type { FieldProblem } from '../../errors.js';
import { variableNameProblem } from '../../../protocol/environment-names.js';
import { sealVariable } from '../../shared/variable-secrets.js';
import type { PlanVariable } from '../types.js';
import type { CreateDeploymentCommand, PlanDeps } from './command.js';
import { invalid, problem } from './problems.js';
import type { PlannedAction, ResolvedSource } from './sources.js';

interface Declared {
  required: boolean;
  secret: boolean;
  default: string | null;
  actions: string[];
}

/** Every variable the plan's action versions declare: required or secret if any declares it so; the first default wins. */
const declaredVariables = (
  actions: readonly PlannedAction[],
  field: string,
  problems: FieldProblem[],
): Map<string, Declared> => {
  const declared = new Map<string, Declared>();
  const seen = new Set<string>();
  for (const planned of actions) {
    if (seen.has(planned.version.id)) continue;
    seen.add(planned.version.id);
    for (const variable of planned.version.variables) {
      const bad = variableNameProblem(variable.name);
      if (bad !== undefined) {
        problems.push(
          problem(
            field,
            `Action '${planned.action.name}' ${planned.version.version} declares variable ${variable.name}, which is refused: ${bad} Fix the action version.`,
          ),
        );
        continue;
      }
      const entry = declared.get(variable.name) ?? { required: false, secret: false, default: null, actions: [] };
      entry.required ||= variable.required;
      entry.secret ||= variable.secret;
      entry.default ??= variable.default;
      if (!entry.actions.includes(planned.action.name)) entry.actions.push(planned.action.name);
      declared.set(variable.name, entry);
    }
  }
  return declared;
};

export interface ResolvedVariables {
  readonly resolved: Record<string, PlanVariable>;
  readonly given: Record<string, string>;
  readonly prompted: Record<string, string>;
  readonly warnings: string[];
  /** A redeploy's inherited variables the new plan dropped: also kept in the plan's warnings. */
  readonly dropped: string[];
}

/** How resolveDeployment treats what a redeploy carried over from its original. */
export interface ResolveOptions {
  /**
   * Names in `variables` / `prompted_values` that come from the original deployment, not from the caller: when
   * the new plan no longer declares one (or its name is now refused), it is dropped with a warning instead of a 400.
   */
  readonly inherited?:
    { readonly variables: ReadonlySet<string>; readonly prompted_values: ReadonlySet<string> } | undefined;
}

export const undeclaredMessage = (name: string): string => `Variable ${name} is not declared by any action of the plan`;

/**
 * The variables the caller gave that may reach a command: problems for refused and undeclared names (inherited
 * ones dropped with a warning instead).
 */
const acceptedVariables = (
  map: Readonly<Record<string, string>> | undefined,
  field: 'variables' | 'prompted_values',
  declared: ReadonlyMap<string, Declared>,
  inherited: ReadonlySet<string>,
  problems: FieldProblem[],
  dropped: string[],
): Map<string, string> => {
  const accepted = new Map<string, string>();
  for (const [name, value] of Object.entries(map ?? {})) {
    const bad = variableNameProblem(name);
    if (inherited.has(name) && (bad !== undefined || !declared.has(name))) {
      dropped.push(
        `Variable ${name} of the original deployment is dropped: ${bad ?? 'the new plan does not declare it.'}`,
      );
    } else if (bad !== undefined) problems.push(problem(`${field}.${name}`, bad));
    else if (!declared.has(name)) problems.push(problem(`${field}.${name}`, undeclaredMessage(name)));
    else accepted.set(name, value);
  }
  return accepted;
};

export const resolveVariables = (
  deps: PlanDeps,
  source: Pick<ResolvedSource, 'actions' | 'field'>,
  command: CreateDeploymentCommand,
  options: ResolveOptions,
): ResolvedVariables => {
  const problems: FieldProblem[] = [];
  const warnings: string[] = [];
  const dropped: string[] = [];
  const declared = declaredVariables(source.actions, source.field, problems);
  const none = new Set<string>();
  const accept = (field: 'variables' | 'prompted_values') =>
    acceptedVariables(command[field], field, declared, options.inherited?.[field] ?? none, problems, dropped);
  const given = accept('variables');
  const prompted = accept('prompted_values');
  invalid(problems, 'The variables are not valid.');
  const resolved: Record<string, PlanVariable> = {};
  const seal = (name: string, value: string) =>
    declared.get(name)?.secret === true ? sealVariable(deps.cipher, value) : value;
  for (const [name, declaration] of declared) {
    const value = prompted.get(name) ?? given.get(name) ?? declaration.default ?? undefined;
    if (value === undefined) {
      const by = declaration.actions.map((a) => `'${a}'`).join(', ');
      if (declaration.required)
        problems.push(problem(`variables.${name}`, `Variable ${name} is required by ${by} and has no value.`));
      else warnings.push(`Variable ${name} (${by}) has no value: its scripts see it unset.`);
      continue;
    }
    resolved[name] = { value: seal(name, value), secret: declaration.secret };
  }
  invalid(problems, 'Required variables have no value.');
  const sealAll = (map: ReadonlyMap<string, string>) =>
    Object.fromEntries([...map].map(([name, value]) => [name, seal(name, value)]));
  return { resolved, given: sealAll(given), prompted: sealAll(prompted), warnings, dropped };
};
