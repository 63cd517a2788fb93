// AGENT_RELEASE of the cloud template: the agent build the service ships, as the JSON of dist/agent/manifest.json
// (written by `npm run build:agent`, which `npm run package` runs first; programs/build.ts). The bundle itself goes to
// the console bucket with the rest of dist/ and is served at its versioned path behind the same distribution.
// Without a build: '' (no release known: agents are never told to update and none shows as outdated). Stage local:
// '' as well, as `npm start` sets AGENT_RELEASE itself from the build its front serves (local/stack.ts).
'use strict';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- the framework loads this file with require
const { readFileSync } = require('node:fs');
// eslint-disable-next-line @typescript-eslint/no-require-imports -- as above
const { join } = require('node:path');

const MANIFEST = join(__dirname, '..', 'dist', 'agent', 'manifest.json');

/** The manifest's release as one line of JSON, or '' when it was not built. */
const releaseOf = (file) => {
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return '';
  }
  const { version, sha256, size, path } = JSON.parse(text);
  return JSON.stringify({ version, sha256, size, path });
};

module.exports = {
  releaseOf,
  release: async ({ resolveVariable }) => ((await resolveVariable('sls:stage')) === 'local' ? '' : releaseOf(MANIFEST)),
};
