/**
 * The admin API of active/standby high availability: `GET /ha` (this instance's role, and who
 * holds the lease), `POST /ha/step-down` (hand over on purpose, for a rolling upgrade). On a
 * standby these, `/health`, `/ready` and `/metrics` answer; every other route says it is a standby
 * and names the active instance (see admin-app.ts).
 */
import { Type } from 'typebox';
import { HttpError } from './http-util.js';
import type { HaRoleName } from './readiness.js';
import type { Route } from './routes.js';
import { error, ref } from './schemas.js';

/** What the admin API needs of the high-availability coordinator. */
export interface HaAdmin {
  /** The role now (synchronous: `/ready` and the standby check ask on every request). */
  role(): HaRoleName;
  /** The role with the lease as the database holds it. */
  status(): Promise<HaStatus>;
  /** Begins handing over and resolves once it has begun; false when this instance was not active. */
  stepDown(): Promise<boolean>;
}

/** `GET /ha`. */
export interface HaStatus {
  readonly role: HaRoleName;
  readonly group: string;
  readonly instanceId: string;
  /** The fencing epoch of this instance's grant, while it holds one. */
  readonly epoch?: number;
  /** Why it is a standby, when it was active before. */
  readonly reason?: string;
  /** When the role last changed, ISO 8601. */
  readonly since: string;
  /** Who holds the lease, as the database says; absent when it could not be read. */
  readonly lease?: { readonly holder?: string; readonly epoch: number; readonly expiresAt: string };
}

const Role = Type.Enum(['active', 'standby', 'activating', 'stepping-down', 'stopped']);

export const HaStatusSchema = Type.Object(
  {
    role: Role,
    group: Type.String(),
    instanceId: Type.String({ description: 'Host name, process id and a random part.' }),
    epoch: Type.Optional(Type.Integer({ description: 'The fencing epoch of this instance’s grant.' })),
    reason: Type.Optional(Type.String({ description: 'Why it is a standby, when it was active before.' })),
    since: Type.String({ description: 'When the role last changed, ISO 8601.' }),
    lease: Type.Optional(
      Type.Object(
        {
          holder: Type.Optional(Type.String({ description: 'The active instance; absent when released.' })),
          epoch: Type.Integer(),
          expiresAt: Type.String({ description: 'ISO 8601.' }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { $id: 'HaStatus', additionalProperties: false, description: 'This instance’s role, and the lease.' },
);

/** The routes; absent high availability, none. */
export function haRoutes(ha: HaAdmin | undefined): Route[] {
  if (ha === undefined) return [];
  const status: Route = {
    method: 'GET',
    path: '/ha',
    operationId: 'haStatus',
    tag: 'gateway',
    summary: 'High availability: this instance’s role, and which instance holds the lease.',
    schema: {
      response: {
        200: { ...ref(HaStatusSchema), description: 'The role and the lease.' },
        401: error('Missing or wrong bearer token.'),
      },
    },
    handle: async () => ({ body: await ha.status() }),
  };
  const stepDown: Route = {
    method: 'POST',
    path: '/ha/step-down',
    operationId: 'haStepDown',
    tag: 'gateway',
    summary:
      'Hands over to a standby: answers once it has begun; the bridges drain and stop, the lease is given back, and this instance stays a standby for a while.',
    action: 'step-down',
    schema: {
      response: {
        200: { ...ref(HaStatusSchema), description: 'Stepping down: the role now (stepping-down).' },
        401: error('Missing or wrong bearer token.'),
        409: error('This instance is not the active one: there is nothing to hand over.'),
      },
    },
    async handle() {
      if (!(await ha.stepDown()))
        throw new HttpError(409, `this instance is ${ha.role()}, not active: there is nothing to hand over`);
      return { body: await ha.status(), audit: {} };
    },
  };
  return [status, stepDown];
}
