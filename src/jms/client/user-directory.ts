/**
 * The users connections may name (`createConnection(user, password)`): the engine's answer to who
 * sends, which it stamps as JMSXUserID (MSG-2). With no list, a named user is taken as given.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { InvalidArgumentError, JMSSecurityError } from '../errors.js';

/** A user a connection may authenticate as. */
export interface EngineUser {
  /** The user name: what JMSXUserID says on the messages its connections send. */
  readonly name: string;
  /** The password `createConnection(name, password)` must give. */
  readonly password: string;
}

/** Checks the user and password a connection names against the configured users, if any. */
export class UserDirectory {
  /** Password digests by user name; undefined when no list is configured. */
  readonly #digests: ReadonlyMap<string, Buffer> | undefined;

  constructor(users: readonly EngineUser[] | undefined) {
    if (users === undefined) {
      this.#digests = undefined;
      return;
    }
    const digests = new Map<string, Buffer>();
    for (const user of users) {
      checkName(user.name);
      if (digests.has(user.name)) throw new InvalidArgumentError(`user '${user.name}' is listed twice`);
      digests.set(user.name, digest(user.password));
    }
    this.#digests = digests;
  }

  /**
   * The authenticated user name for a connection: undefined when none is named (an anonymous
   * connection), the name when it is listed with this password or when no list is configured.
   * Unknown users and wrong passwords get the same error, so it does not tell which names exist.
   */
  authenticate(user: string | null | undefined, password: string | null | undefined): string | undefined {
    if (user === null || user === undefined) return undefined;
    checkName(user);
    if (this.#digests === undefined) return user;
    const expected = this.#digests.get(user);
    // Compared as digests of equal length, in constant time, so the time taken tells nothing either.
    const given = digest(typeof password === 'string' ? password : '');
    if (expected === undefined || !timingSafeEqual(expected, given) || typeof password !== 'string')
      throw new JMSSecurityError(`user '${user}' is not known or the password is wrong`);
    return user;
  }
}

function checkName(name: unknown): void {
  if (typeof name !== 'string' || name === '')
    throw new InvalidArgumentError('a user name must be a non-empty string');
}

function digest(password: string): Buffer {
  return createHash('sha256').update(password, 'utf8').digest();
}
