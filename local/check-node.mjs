// Run first by `npm start` and `npm test`: the npm scripts must run on the Node 22 that the pinned `node` package
// installs into node_modules/.bin (npm puts it first on PATH). Plain JavaScript, so that any Node can run it.
const major = Number(process.versions.node.split('.')[0]);
if (major < 22) {
  console.error(
    [
      `This project runs on Node.js 22 or newer; the npm scripts found Node ${process.versions.node}.`,
      'The pinned `node` package (a devDependency) puts Node 22 in node_modules/.bin, but its binary is missing:',
      'an install with --ignore-scripts skips the step that fetches it. Run `npm ci` again without',
      '--ignore-scripts (or install Node 22 yourself, e.g. with nvm: `nvm use` reads .nvmrc).',
    ].join('\n'),
  );
  process.exit(1);
}
