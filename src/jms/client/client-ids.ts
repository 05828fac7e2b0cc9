/** The client ids connections hold now: each unique across connections (SES-1). */
import { InvalidClientIDError } from '../errors.js';

export class ClientIdClaims {
  readonly #claimed = new Set<string>();

  /** Claims a client id for a connection; refused when empty or held by another connection. */
  claim(clientId: string): void {
    if (typeof clientId !== 'string' || clientId.trim() === '')
      throw new InvalidClientIDError(`client id '${String(clientId)}' is empty`);
    if (this.#claimed.has(clientId))
      throw new InvalidClientIDError(`client id '${clientId}' is already in use by another connection`);
    this.#claimed.add(clientId);
  }

  /** Releases a client id when its connection closes. */
  release(clientId: string): void {
    this.#claimed.delete(clientId);
  }
}
