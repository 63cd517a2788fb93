// Request and response shapes of the catalog (decisions.md section 5). Shapes only: semver validity, sizes in
// bytes, scopes and references are the domain's rules (domain/catalog/).
import * as v from 'valibot';
import { INTERPRETERS } from '../../../domain/catalog/types.js';
import { VARIABLE_NAME_PATTERN } from '../../../protocol/environment-names.js';
import { Name, PageQuery, Slug, Uuid } from '../../shared/schemas.js';

export { Paginated, PathId } from '../../shared/schemas.js';

const Description = v.nullable(v.pipe(v.string(), v.maxLength(2000, 'must be at most 2000 characters')));
/** A tenant by UUID or short id (null: global). */
const TenantRef = v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(64)));
/** A semantic version as text; the domain checks it is one. */
const VersionText = v.pipe(
  v.string(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(128, 'must be at most 128 characters'),
);
/** A record by UUID or short id. */
const RefId = v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(64));
const Order = v.pipe(
  v.number(),
  v.integer('must be an integer'),
  v.minValue(1, 'must be at least 1'),
  v.maxValue(1000),
);
/** A script: at most 64 KiB (the domain counts UTF-8 bytes). */
const Script = v.pipe(
  v.string(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(64 * 1024, 'must be at most 64 KiB'),
);
const Unchangeable = (field: string) => v.optional(v.never(`${field} cannot be changed after creation`));

export const InterpreterSchema = v.picklist(INTERPRETERS, `must be one of ${INTERPRETERS.join(', ')}`);

const VariableBody = v.object({
  name: v.pipe(
    v.string(),
    v.regex(
      VARIABLE_NAME_PATTERN,
      'must be an environment variable name (letters, digits, _; not starting with a digit; at most 128 characters)',
    ),
  ),
  description: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(1000)))),
  required: v.optional(v.boolean()),
  default: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(4096)))),
  secret: v.optional(v.boolean()),
});

const versionFields = {
  script: Script,
  interpreter: v.optional(InterpreterSchema),
  rollback_script: v.optional(v.nullable(Script)),
  timeout_seconds: v.optional(
    v.nullable(
      v.pipe(
        v.number(),
        v.integer('must be an integer'),
        v.minValue(1, 'must be 1 to 86400'),
        v.maxValue(86_400, 'must be 1 to 86400'),
      ),
    ),
  ),
  variables: v.optional(v.pipe(v.array(VariableBody), v.maxLength(50, 'at most 50 variables'))),
  changelog: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(10_000)))),
};

/** CreateActionVersionRequest. */
export const NewVersionBody = v.object({ version: VersionText, ...versionFields });

/** UpdateActionVersionRequest: the given fields replace the version's; `version` renumbers it. */
export const VersionPatchBody = v.object({
  version: v.optional(VersionText),
  script: v.optional(Script),
  interpreter: versionFields.interpreter,
  rollback_script: versionFields.rollback_script,
  timeout_seconds: versionFields.timeout_seconds,
  variables: versionFields.variables,
  changelog: versionFields.changelog,
});

export const CreateActionBody = v.object({
  slug: Slug,
  name: Name,
  description: v.optional(Description),
  tenant_id: v.optional(TenantRef),
  version: NewVersionBody,
});

/** UpdateActionRequest: name and description; slug and tenant are fixed (naming them answers 400). */
export const UpdateActionBody = v.object({
  name: v.optional(Name),
  description: v.optional(Description),
  slug: Unchangeable('slug'),
  tenant_id: Unchangeable('tenant_id'),
});

const StepBody = v.object({
  order: v.optional(Order),
  action_id: RefId,
  version_requirement: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(256)))),
});
const Steps = v.pipe(
  v.array(StepBody),
  v.minLength(1, 'a sequence needs at least one step'),
  v.maxLength(40, 'at most 40 steps'),
);

/** The fields sequences and solutions share, as created and as changed (each then adds its list and the tenant). */
const recordFields = { name: Name, description: v.optional(Description), version: v.optional(VersionText) };
const recordPatchFields = {
  name: v.optional(Name),
  description: v.optional(Description),
  version: v.optional(VersionText),
};

export const CreateSequenceBody = v.object({ ...recordFields, tenant_id: v.optional(TenantRef), steps: Steps });

export const UpdateSequenceBody = v.object({
  ...recordPatchFields,
  steps: v.optional(Steps),
  tenant_id: Unchangeable('tenant_id'),
});

const EntryBody = v.object({ order: v.optional(Order), sequence_id: RefId });
const Entries = v.pipe(
  v.array(EntryBody),
  v.minLength(1, 'a solution needs at least one sequence'),
  v.maxLength(40, 'at most 40 sequences'),
);

export const CreateSolutionBody = v.object({ ...recordFields, tenant_id: v.optional(TenantRef), sequences: Entries });

export const UpdateSolutionBody = v.object({
  ...recordPatchFields,
  sequences: v.optional(Entries),
  tenant_id: Unchangeable('tenant_id'),
});

/** page, limit, and for global callers the tenant whose view to list (its records and global ones). */
export const CatalogListQuery = v.object({ ...PageQuery(50).entries, tenant_id: v.optional(Uuid) });

export const VersionPath = v.object({ id: RefId, version: v.pipe(v.string(), v.minLength(1), v.maxLength(128)) });

// ---- responses ----

export const ActionVersionSchema = v.object({
  id: v.string(),
  action_id: v.string(),
  version: v.string(),
  script: v.string(),
  interpreter: InterpreterSchema,
  rollback_script: v.nullable(v.string()),
  timeout_seconds: v.nullable(v.number()),
  variables: v.array(
    v.object({
      name: v.string(),
      description: v.nullable(v.string()),
      required: v.boolean(),
      default: v.nullable(v.string()),
      secret: v.boolean(),
    }),
  ),
  changelog: v.nullable(v.string()),
  created_at: v.string(),
  created_by: v.string(),
});

export const ActionSchema = v.object({
  id: v.string(),
  short_id: v.string(),
  slug: v.string(),
  name: v.string(),
  description: v.nullable(v.string()),
  tenant_id: v.nullable(v.string()),
  latest_version: v.string(),
  created_at: v.string(),
  updated_at: v.string(),
});

export const ActionDetailSchema = v.object({ ...ActionSchema.entries, versions: v.array(ActionVersionSchema) });

/** The response fields sequences and solutions share, around their list (steps, sequences). */
const recordHead = {
  id: v.string(),
  short_id: v.string(),
  name: v.string(),
  description: v.nullable(v.string()),
  version: v.string(),
  tenant_id: v.nullable(v.string()),
};
const recordTail = { created_at: v.string(), updated_at: v.string() };

export const SequenceSchema = v.object({
  ...recordHead,
  steps: v.array(v.object({ order: v.number(), action_id: v.string(), version_requirement: v.nullable(v.string()) })),
  ...recordTail,
});

export const SolutionSchema = v.object({
  ...recordHead,
  sequences: v.array(v.object({ order: v.number(), sequence_id: v.string() })),
  ...recordTail,
});
