/**
 * Request validation from the routes' JSON Schemas, with Ajv (the validator fastify bundles).
 * A query string or path parameter is text, so it is coerced to the declared type (`limit=5`);
 * a JSON body is taken as sent: `"5"` is not a number there. Each problem reads as the rest of
 * the API's errors do: `limit: must be >= 1`.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { FastifySchema } from 'fastify';
import type { TSchema } from 'typebox';
import { HttpError } from './http-util.js';

function ajvWith(coerceTypes: boolean, shared: readonly TSchema[]): Ajv {
  const ajv = new Ajv({
    coerceTypes,
    useDefaults: true,
    removeAdditional: false,
    allErrors: false,
    strict: false,
  });
  for (const schema of shared) ajv.addSchema(schema);
  return ajv;
}

/** Fastify's validator compiler: one Ajv for bodies, one that coerces for queries and parameters. */
export function validatorCompiler(shared: readonly TSchema[]) {
  const body = ajvWith(false, shared);
  const text = ajvWith(true, shared);
  return ({ schema, httpPart }: { schema: FastifySchema; httpPart?: string }): ValidateFunction =>
    (httpPart === 'body' ? body : text).compile(schema);
}

/** Fastify's schema error formatter: the problems as one 400, each with where it is. */
export function validationError(errors: ErrorObject[], dataVar: string): Error {
  return new HttpError(400, errors.map((problem) => describe(problem, dataVar)).join('; '));
}

function describe(problem: ErrorObject, dataVar: string): string {
  const base = problem.instancePath.slice(1).replaceAll('/', '.');
  const at = (name?: string) =>
    [base, name].filter(Boolean).join('.') || (dataVar === 'body' ? 'request body' : dataVar);
  const params = problem.params as Record<string, unknown>;
  switch (problem.keyword) {
    case 'required':
      return `${at(String(params.missingProperty))}: is required`;
    case 'additionalProperties':
      return `${at(String(params.additionalProperty))}: ${dataVar === 'querystring' ? 'unknown query parameter' : 'unknown field'}`;
    case 'enum':
      return `${at()}: expected one of ${(params.allowedValues as unknown[]).join(', ')}`;
    default:
      return `${at()}: ${problem.message ?? 'is not valid'}`;
  }
}
