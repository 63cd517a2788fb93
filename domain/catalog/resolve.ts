// Lookups and version choice the deployments context reuses: resolve an action, sequence or solution by UUID or
// short id, and pick the version of an action a requirement selects.
//
// "Latest" is the highest version by semver precedence, pre-releases included (so `latest_version` and "no
// requirement" always agree). A requirement is an npm-style range (`^1.2`, `~1.4.0`, `>=2 <3`, `1.2.3`) with
// npm's rule for pre-releases: a range matches one only when it names a pre-release of the same version.
import semver from 'semver';
import type { ActionRepository, SequenceRepository, SolutionRepository } from './ports.js';
import type { ActionWithVersions, Sequence, Solution } from './types.js';

/** A normalised semantic version (`v1.2.3` -> `1.2.3`), or undefined when the text is not one. */
export const normalizeVersion = (text: string): string | undefined => semver.valid(text.trim()) ?? undefined;

/** Whether the text is a semver range a requirement may use. */
export const isVersionRange = (text: string): boolean => text.trim() !== '' && semver.validRange(text.trim()) !== null;

/** Newest first by semver precedence. */
export const newestFirst = <V extends { readonly version: string }>(versions: readonly V[]): V[] =>
  [...versions].sort((a, b) => semver.rcompare(a.version, b.version));

/**
 * The version a deployment runs: the newest satisfying `requirement`, or the newest of all when there is none.
 * Undefined when nothing satisfies it (or the range is not valid).
 */
export const pickVersion = <V extends { readonly version: string }>(
  versions: readonly V[],
  requirement?: string | null,
): V | undefined => {
  if (requirement === undefined || requirement === null || requirement.trim() === '') return newestFirst(versions)[0];
  if (!isVersionRange(requirement)) return undefined;
  const best = semver.maxSatisfying(
    versions.map((v) => v.version),
    requirement.trim(),
  );
  return best === null ? undefined : versions.find((v) => v.version === best);
};

/** Whether a caller of `tenantId` (null: global) may see a record of `record.tenantId`. */
export const isVisibleTo = (tenantId: string | null, record: { readonly tenantId: string | null }): boolean =>
  tenantId === null || record.tenantId === null || record.tenantId === tenantId;

/** The action with its versions newest first, by UUID or short id; undefined when missing. */
export const findActionWithVersions = async (
  actions: Pick<ActionRepository, 'find'>,
  idOrShortId: string,
): Promise<ActionWithVersions | undefined> => {
  const found = await actions.find(idOrShortId);
  return found === undefined ? undefined : { action: found.action, versions: newestFirst(found.versions) };
};

export const findSequence = async (
  sequences: Pick<SequenceRepository, 'find'>,
  idOrShortId: string,
): Promise<Sequence | undefined> => sequences.find(idOrShortId);

export const findSolution = async (
  solutions: Pick<SolutionRepository, 'find'>,
  idOrShortId: string,
): Promise<Solution | undefined> => solutions.find(idOrShortId);
