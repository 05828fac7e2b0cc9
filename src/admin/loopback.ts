/** Which listen addresses are loopback: there the admin API may run without a token. */

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

/** Whether an address only accepts connections from this machine. */
export function isLoopback(host: string): boolean {
  return LOOPBACK.test(host);
}
