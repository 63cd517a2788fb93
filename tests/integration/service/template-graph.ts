// The dependency graph CloudFormation builds from a template: a resource depends on every resource its properties
// name (Ref, Fn::GetAtt, ${...} in Fn::Sub) and on its DependsOn. CloudFormation refuses a template whose graph has
// a cycle ("Circular dependency between resources"); `cyclesOf` finds them in the packaged template.
export interface TemplateResource {
  readonly Type: string;
  readonly Properties?: unknown;
  readonly DependsOn?: string | readonly string[];
}

/** Each resource's direct dependencies (resources of the template only; pseudo parameters are not resources). */
export const dependenciesOf = (resources: Readonly<Record<string, TemplateResource>>): Map<string, Set<string>> => {
  const named = (id: string, into: Set<string>) => {
    if (Object.hasOwn(resources, id)) into.add(id);
  };
  const walk = (value: unknown, into: Set<string>): void => {
    if (Array.isArray(value)) for (const item of value) walk(item, into);
    else if (value !== null && typeof value === 'object')
      for (const [key, inner] of Object.entries(value)) {
        if (key === 'Ref' && typeof inner === 'string') named(inner, into);
        else if (key === 'Fn::GetAtt')
          named(Array.isArray(inner) ? String(inner[0]) : String(inner).split('.')[0]!, into);
        else if (key === 'Fn::Sub') {
          const [text, variables] = Array.isArray(inner) ? inner : [inner, undefined];
          for (const match of String(text).matchAll(/\$\{([A-Za-z0-9]+)(\.[^}]*)?\}/g)) named(match[1]!, into);
          walk(variables, into);
        } else walk(inner, into);
      }
  };
  const graph = new Map<string, Set<string>>();
  for (const [id, resource] of Object.entries(resources)) {
    const into = new Set<string>();
    walk(resource.Properties, into);
    for (const dependency of [resource.DependsOn ?? []].flat()) named(dependency, into);
    graph.set(id, into);
  }
  return graph;
};

/** Every cycle found by a depth-first walk, as `A -> B -> ... -> A`; none for a template CloudFormation accepts. */
export const cyclesOf = (graph: ReadonlyMap<string, ReadonlySet<string>>): string[] => {
  const state = new Map<string, 'open' | 'done'>();
  const cycles: string[] = [];
  const visit = (id: string, path: string[]): void => {
    state.set(id, 'open');
    for (const next of graph.get(id) ?? []) {
      if (state.get(next) === 'open') cycles.push([...path.slice(path.indexOf(next)), next].join(' -> '));
      else if (state.get(next) === undefined) visit(next, [...path, next]);
    }
    state.set(id, 'done');
  };
  for (const id of graph.keys()) if (state.get(id) === undefined) visit(id, [id]);
  return cycles;
};
