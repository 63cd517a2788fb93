import * as v from 'valibot';
import { isDateTime } from '../../../domain/tenancy/date-time.js';
import { Name, Paginated, PageQuery, Slug, Uuid } from '../../shared/schemas.js';

export { PathId } from '../../shared/schemas.js';

/** A reference to another record: its UUID or its short id. */
export const RefId = v.pipe(
  v.string(),
  v.trim(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(64, 'must be at most 64 characters'),
);

/** An ISO 8601 date-time with an offset; stored normalised to UTC. */
export const DateTime = v.pipe(
  v.string(),
  v.check(isDateTime, 'must be an ISO 8601 date-time with an offset, such as 2026-03-01T18:00:00Z'),
);

export const Reason = v.pipe(v.string(), v.trim(), v.maxLength(2000, 'must be at most 2000 characters'));

export const TenantSchema = v.object({
  id: v.string(),
  short_id: v.string(),
  name: v.string(),
  slug: v.string(),
  created_at: v.string(),
  updated_at: v.string(),
});

export const CreateTenantBody = v.object({ name: Name, slug: Slug });
export const UpdateTenantBody = v.object({ name: v.optional(Name), slug: v.optional(Slug) });

export const EnvironmentSchema = v.object({
  id: v.string(),
  short_id: v.string(),
  name: v.string(),
  tenant_id: v.nullable(v.string()),
  created_at: v.string(),
  updated_at: v.string(),
});

export const CreateEnvironmentBody = v.object({ name: Name, tenant_id: v.optional(v.nullable(RefId)) });
export const UpdateEnvironmentBody = v.object({ name: v.optional(Name), tenant_id: v.optional(v.nullable(RefId)) });
export const EnvironmentsQuery = v.object({ ...PageQuery(50).entries, tenant_id: v.optional(Uuid) });

export const FreezeSchema = v.object({
  id: v.string(),
  short_id: v.string(),
  name: v.string(),
  reason: v.nullable(v.string()),
  start_time: v.string(),
  end_time: v.string(),
  tenant_id: v.nullable(v.string()),
  solution_id: v.nullable(v.string()),
  environment_id: v.nullable(v.string()),
  active: v.boolean(),
  created_by: v.string(),
  created_at: v.string(),
  updated_at: v.string(),
});

export const CreateFreezeBody = v.object({
  name: Name,
  reason: v.optional(v.nullable(Reason)),
  start_time: DateTime,
  end_time: DateTime,
  tenant_id: v.optional(v.nullable(RefId)),
  solution_id: v.optional(v.nullable(RefId)),
  environment_id: v.optional(v.nullable(RefId)),
});

export const UpdateFreezeBody = v.object({
  name: v.optional(Name),
  reason: v.optional(v.nullable(Reason)),
  start_time: v.optional(DateTime),
  end_time: v.optional(DateTime),
  tenant_id: v.optional(v.nullable(RefId)),
  solution_id: v.optional(v.nullable(RefId)),
  environment_id: v.optional(v.nullable(RefId)),
});

export const FreezesQuery = v.object({
  ...PageQuery(50).entries,
  active: v.optional(
    v.pipe(
      v.picklist(['true', 'false'], 'must be true or false'),
      v.transform((value) => value === 'true'),
    ),
  ),
  tenant_id: v.optional(Uuid),
  environment_id: v.optional(Uuid),
});

export const TenantList = Paginated(TenantSchema);
export const EnvironmentList = Paginated(EnvironmentSchema);
export const FreezeList = Paginated(FreezeSchema);
