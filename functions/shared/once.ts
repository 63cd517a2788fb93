/** A value created on first use and reused after: how handlers defer creating real dependencies. */
export const once = <T>(create: () => T): (() => T) => {
  let made = false;
  let value: T;
  return () => {
    if (!made) {
      value = create();
      made = true;
    }
    return value;
  };
};
