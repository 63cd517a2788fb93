// A serverless plugin for the local stack only: with DEPLOYER_PREBUILT_BUNDLES=on, serverless-esbuild builds no
// function, because local/offline.ts has already put bundles of exactly the same sources into its work folder
// (the test run starts dozens of stacks; each build was ~5 CPU-seconds). Without that variable it does nothing, so
// `serverless package` and `npm start -- --watch` build as always.
'use strict';

class PrebuiltBundles {
  constructor(serverless) {
    if (process.env.DEPLOYER_PREBUILT_BUNDLES !== 'on') return;
    this.hooks = {
      'before:offline:start:init': () => {
        for (const name of serverless.service.getAllFunctions())
          serverless.service.getFunction(name).skipEsbuild = true;
      },
    };
  }
}

module.exports = PrebuiltBundles;
