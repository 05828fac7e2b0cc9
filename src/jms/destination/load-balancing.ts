/** Published on its own so the engine's options name it without naming its destination state. */

/** How producers spread messages over members. */
export type LoadBalancing = 'round-robin' | 'random';
