/** Published on its own: a selector's result, without the parsed tree the evaluator works on. */

/** TRUE, FALSE or UNKNOWN (`null`). */
export type Truth = boolean | null;
