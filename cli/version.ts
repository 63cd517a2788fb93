/** The command line's version: programs/build.ts reads this literal (the served file's version and path). */
export const CLI_VERSION = '1.0.0';
