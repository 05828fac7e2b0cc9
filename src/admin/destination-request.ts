/**
 * The body of `POST /destinations`, validated exactly as a destination in the configuration
 * file is: the same schema (DESTINATION_OPTION_FIELDS, the engine's name rule) and the same
 * cross-field checks, with each problem naming its JSON path (`options.messagesMaximum`).
 */
import { checkDestinationOptions } from '../config/checks.js';
import { DESTINATION_NAME_PATTERN, DESTINATION_OPTION_FIELDS } from '../config/gateway-schema.js';
import type { ObjectNode } from '../config/schema.js';
import { type ValidationContext, resolveNode } from '../config/validate.js';
import type { Problem } from '../config/yaml-source.js';
import type { DestinationOptions } from '../jms/destination/destination-options.js';
import { HttpError } from './http-util.js';

/** A destination to create. */
export interface DestinationRequest {
  readonly kind: 'queue' | 'topic';
  readonly name: string;
  readonly options: DestinationOptions;
}

const REQUEST: ObjectNode = {
  type: 'object',
  description: 'A destination to create.',
  fields: {
    kind: { type: 'enum', values: ['queue', 'topic'], required: true, description: 'queue or topic.' },
    name: {
      type: 'string',
      pattern: DESTINATION_NAME_PATTERN,
      required: true,
      description: 'The destination name.',
    },
    options: {
      type: 'object',
      optional: true,
      description: 'Its settings, as under destinations in the configuration file.',
      fields: DESTINATION_OPTION_FIELDS,
    },
  },
};

/** Validates a request body; throws a 400 listing every problem, each with its JSON path. */
export function parseDestinationRequest(body: unknown): DestinationRequest {
  const problems: Problem[] = [];
  const context: ValidationContext = { problems, isCoercible: () => false, connections: new Map() };
  const resolved = resolveNode(REQUEST, body, '', context) as Record<string, unknown> | undefined;
  const options = (resolved?.options ?? {}) as Record<string, unknown>;
  if (resolved?.options !== undefined)
    checkDestinationOptions(options, 'options', (path, message) => problems.push({ path, message }));
  if (problems.length > 0 || resolved === undefined)
    throw new HttpError(
      400,
      problems.map((p) => `${p.path === '' ? 'request body' : p.path}: ${p.message}`).join('; '),
    );
  return { kind: resolved.kind as 'queue' | 'topic', name: resolved.name as string, options };
}
