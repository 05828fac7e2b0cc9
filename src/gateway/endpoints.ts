/**
 * Builds a bridge's sources and sinks from endpoint configurations: the gateway's own queues and
 * topics through the bridge runtime's internal endpoints, broker endpoints through their
 * connector. Nothing connects here; the bridge connects when it starts.
 */
import { InternalSink, InternalSource } from '../bridge/index.js';
import type { ConnectorEndpointConfig, EndpointConfig } from '../config/gateway-config.js';
import { isInternalEndpoint } from '../config/gateway-config.js';
import type { Clock } from '../jms/clock.js';
import type { JmsEngine } from '../jms/engine.js';
import { InvalidArgumentError } from '../jms/errors.js';
import type { ConnectorContext, Sink, Source } from '../spi/index.js';
import type { GatewayLogger } from './logger.js';
import type { XPathEvaluator } from '../spi/xpath-evaluator.js';

/** What building an endpoint needs. */
export interface EndpointServices {
  readonly engine: JmsEngine;
  readonly logger: GatewayLogger;
  /** Ms an internal sink waits for room before the bridge backs off (the connection factory's send timeout). */
  readonly sendTimeoutMs: number;
  readonly evaluateXPath: XPathEvaluator;
  /** The gateway's clock, handed to connectors for their own delays. */
  readonly clock: Clock;
}

/** What the gateway gives a connector: the SPI's context, with the XPath evaluator always set. */
export interface GatewayConnectorContext extends ConnectorContext {
  readonly evaluateXPath: XPathEvaluator;
}

/** The source of a bridge; `selector` is the internal source's consumer selector (BRG-3). */
export function createSource(
  endpoint: EndpointConfig,
  name: string,
  selector: string | undefined,
  services: EndpointServices,
): Source {
  if (isInternalEndpoint(endpoint))
    return new InternalSource({
      engine: services.engine,
      destination: endpoint.destination,
      ...(selector === undefined ? {} : { selector }),
      ...(endpoint.durable === undefined ? {} : { durable: endpoint.durable }),
      ...(endpoint.session === undefined ? {} : { session: endpoint.session }),
      ...(endpoint.transactionSize === undefined ? {} : { transactionSize: endpoint.transactionSize }),
    });
  const { connector } = endpoint;
  if (!connector.createSource)
    throw new InvalidArgumentError(`connector '${connector.type}' cannot be a source`);
  return connector.createSource(endpoint.config, context(endpoint, name, 'source', services));
}

/**
 * A sink: a bridge's target or its error destination (`side` names it in logs). A target is told
 * the bridge's `qos`, so a connector that can make exactly-once hold at its broker does so.
 */
export function createSink(
  endpoint: EndpointConfig,
  name: string,
  side: 'target' | 'errorDestination',
  services: EndpointServices,
  qos?: ConnectorContext['qos'],
): Sink {
  if (isInternalEndpoint(endpoint))
    return new InternalSink({
      engine: services.engine,
      destination: endpoint.destination,
      sendTimeoutMs: endpoint.sendTimeoutMs ?? services.sendTimeoutMs,
      // What a bridge brings in names the bridge (JMSXAppID); an error destination gets the
      // message as it failed, so a replay sends it on unchanged.
      ...(side === 'target' ? { applicationId: name } : {}),
    });
  const { connector } = endpoint;
  if (!connector.createSink)
    throw new InvalidArgumentError(`connector '${connector.type}' cannot be a target`);
  // Client ids derive from the context name: an error destination on the same broker as the
  // target must not take the target's (MQTT brokers disconnect the older of two equal ids).
  const contextName = side === 'target' ? name : `${name}-errors`;
  const base = context(endpoint, contextName, side, services);
  return connector.createSink(
    endpoint.config,
    side === 'target' && qos !== undefined ? { ...base, qos } : base,
  );
}

function context(
  endpoint: ConnectorEndpointConfig,
  name: string,
  side: string,
  services: EndpointServices,
): GatewayConnectorContext {
  return {
    name,
    logger: services.logger.child({ component: 'connector', connector: endpoint.type, side }),
    evaluateXPath: services.evaluateXPath,
    clock: services.clock,
  };
}
