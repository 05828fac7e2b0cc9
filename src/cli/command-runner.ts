/**
 * How a command's action reports its exit code: the action resolves to it, the program keeps it.
 * Throwing a UsageError means exit 2, any other error exit 1, each as one line.
 */

/** Wraps an action that resolves to an exit code into what commander's `.action()` takes. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- commander passes arguments whose types the action declares
export type CommandRunner = <A extends any[]>(
  action: (...args: A) => Promise<number>,
) => (...args: A) => Promise<void>;
