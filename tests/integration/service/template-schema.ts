// The packaged CloudFormation template checked against the resource types' published schemas (issue 33), as the
// AWS CDK team publishes them on npm: @aws-cdk/aws-service-spec, a database built from the CloudFormation registry
// schemas of every resource type (properties with their types and whether they are required, attributes), which
// the CDK generates its constructs from. cfn-lint would be the usual tool, but it is Python (PyPI is not reachable
// here and Debian does not package it) and the npm package of that name is a 2019 fork with a stale specification.
//
// What is checked, per resource: the type exists (custom resources aside); every property is one of its type's
// properties, recursively through nested property types; every required property is present; literal values have
// the property's type (string, integer, number, boolean, array, map, object, JSON, tag); `Ref` names a resource, a
// parameter or a pseudo parameter; `Fn::GetAtt` names a resource and an attribute of its type; `DependsOn` names
// resources. Intrinsic functions are accepted wherever a value is (their result type is not inferred).
import { loadAwsServiceSpecSync } from '@aws-cdk/aws-service-spec';

type SpecDatabase = ReturnType<typeof loadAwsServiceSpecSync>;

interface PropertyType {
  readonly type: string;
  readonly element?: PropertyType;
  readonly types?: readonly PropertyType[];
  readonly reference?: { readonly $ref: string };
}
interface Property {
  readonly type: PropertyType;
  readonly required?: boolean;
  readonly previousTypes?: readonly PropertyType[];
}
type Properties = Readonly<Record<string, Property>>;

export interface TemplateResource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
  readonly DependsOn?: string | string[];
}
export interface Template {
  readonly Parameters?: Record<string, unknown>;
  readonly Conditions?: Record<string, unknown>;
  readonly Resources: Record<string, TemplateResource>;
}

const PSEUDO = new Set([
  'AWS::AccountId',
  'AWS::NotificationARNs',
  'AWS::NoValue',
  'AWS::Partition',
  'AWS::Region',
  'AWS::StackId',
  'AWS::StackName',
  'AWS::URLSuffix',
]);

let database: SpecDatabase | undefined;
const db = (): SpecDatabase => (database ??= loadAwsServiceSpecSync());

const isIntrinsic = (value: unknown): boolean =>
  typeof value === 'object' &&
  value !== null &&
  !Array.isArray(value) &&
  Object.keys(value).length === 1 &&
  /^(Ref|Fn::\w+|Condition)$/.test(Object.keys(value)[0]!);

const resourceSpec = (type: string) =>
  db().lookup('resource', 'cloudFormationType', 'equals', type)[0] as
    { readonly properties: Properties; readonly attributes: Readonly<Record<string, unknown>> } | undefined;

const typeDefinition = (id: string) => db().get('typeDefinition', id) as unknown as { readonly properties: Properties };

/** What is wrong with `value` for a property of type `type`, at `path` (empty: nothing). */
const valueProblems = (value: unknown, type: PropertyType, path: string): string[] => {
  if (isIntrinsic(value)) return [];
  switch (type.type) {
    case 'json':
      return [];
    case 'string':
    case 'date-time':
      return ['string', 'number', 'boolean'].includes(typeof value) ? [] : [`${path}: expected a string`];
    case 'integer':
    case 'number':
      return typeof value === 'number' || (typeof value === 'string' && value.trim() !== '' && !isNaN(Number(value)))
        ? []
        : [`${path}: expected ${type.type === 'integer' ? 'an integer' : 'a number'}`];
    case 'boolean':
      return typeof value === 'boolean' || value === 'true' || value === 'false' ? [] : [`${path}: expected a boolean`];
    case 'array':
      if (!Array.isArray(value)) return [`${path}: expected a list`];
      return value.flatMap((v, i) => valueProblems(v, type.element!, `${path}[${i}]`));
    case 'map':
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return [`${path}: expected a map`];
      return Object.entries(value).flatMap(([k, v]) => valueProblems(v, type.element!, `${path}.${k}`));
    case 'tag':
      return valueProblems(value, { type: 'object' }, path).concat(
        typeof value === 'object' && value !== null && 'Key' in value && 'Value' in value
          ? []
          : [`${path}: a tag needs Key and Value`],
      );
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value)
        ? []
        : [`${path}: expected an object`];
    case 'ref':
      return objectProblems(value, typeDefinition(type.reference!.$ref).properties, path);
    case 'union': {
      const each = type.types!.map((t) => valueProblems(value, t, path));
      return each.some((p) => p.length === 0) ? [] : each.reduce((a, b) => (a.length <= b.length ? a : b));
    }
    default:
      return [];
  }
};

/** What is wrong with an object of properties against its type's properties. */
const objectProblems = (value: unknown, properties: Properties, path: string): string[] => {
  if (isIntrinsic(value)) return [];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [`${path}: expected an object`];
  const given = value as Record<string, unknown>;
  const problems: string[] = [];
  for (const [name, property] of Object.entries(properties))
    if (property.required === true && given[name] === undefined) problems.push(`${path}.${name}: required`);
  for (const [name, v] of Object.entries(given)) {
    const property = properties[name];
    if (property === undefined) {
      problems.push(`${path}.${name}: not a property of this type`);
      continue;
    }
    const types = [property.type, ...(property.previousTypes ?? [])];
    const each = types.map((t) => valueProblems(v, t, `${path}.${name}`));
    if (!each.some((p) => p.length === 0)) problems.push(...each[0]!);
  }
  return problems;
};

/** Every `Ref` and `Fn::GetAtt` inside a value, with where it is. */
const references = (value: unknown, path: string, found: { ref: string; attribute?: string; path: string }[]) => {
  if (Array.isArray(value)) value.forEach((v, i) => references(v, `${path}[${i}]`, found));
  else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      if (k === 'Ref' && typeof v === 'string') found.push({ ref: v, path });
      else if (k === 'Fn::GetAtt') {
        const [ref, ...attribute] = Array.isArray(v) ? (v as string[]) : String(v).split('.');
        if (typeof ref === 'string') found.push({ ref, attribute: attribute.join('.'), path });
      } else references(v, `${path}.${k}`, found);
    }
  }
  return found;
};

/** Every problem of the template against the published schemas, as `Resource.Property: what` lines. */
export const templateSchemaProblems = (template: Template): string[] => {
  const problems: string[] = [];
  const parameters = new Set(Object.keys(template.Parameters ?? {}));
  for (const [id, resource] of Object.entries(template.Resources)) {
    if (resource.Type.startsWith('Custom::') || resource.Type === 'AWS::CloudFormation::CustomResource') continue;
    const spec = resourceSpec(resource.Type);
    if (spec === undefined) {
      problems.push(`${id}: ${resource.Type} is not a CloudFormation resource type`);
      continue;
    }
    problems.push(...objectProblems(resource.Properties ?? {}, spec.properties, id));
    for (const dependency of [resource.DependsOn ?? []].flat())
      if (template.Resources[dependency] === undefined) problems.push(`${id}.DependsOn: no resource ${dependency}`);
  }
  for (const { ref, attribute, path } of references(template.Resources, 'Resources', [])) {
    const target = template.Resources[ref];
    if (attribute === undefined) {
      if (target === undefined && !parameters.has(ref) && !PSEUDO.has(ref))
        problems.push(`${path}: Ref to unknown ${ref}`);
      continue;
    }
    if (target === undefined) {
      problems.push(`${path}: Fn::GetAtt of unknown ${ref}`);
      continue;
    }
    const spec = target.Type.startsWith('Custom::') ? undefined : resourceSpec(target.Type);
    if (spec !== undefined && !(attribute in spec.attributes))
      problems.push(`${path}: ${target.Type} has no attribute ${attribute}`);
  }
  return problems;
};
