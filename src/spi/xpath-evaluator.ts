/**
 * XPath evaluation for connectors that key or route by the body (the Kafka sink's
 * `key.from: xpath`): connectors cannot import the engine's selector module, so the runtime
 * passes this in the connector context (`ConnectorContext.evaluateXPath`). Same semantics as `JMS_BEA_SELECT` (SEL-4): the string
 * value of the first selected node, or null for a body that is not XML, does not parse, or has
 * no such node; each body is parsed at most once per message.
 */
import type { Message } from '../jms/message/message.js';
import { CompiledXPath } from '../jms/selector/xpath/compiled-xpath.js';

/** Evaluates an XPath expression on a message's XML body. */
export type XPathEvaluator = (message: Message, expression: string) => string | null;

/** An evaluator that compiles each distinct expression once. */
export function createXPathEvaluator(): XPathEvaluator {
  const compiled = new Map<string, CompiledXPath>();
  return (message, expression) => {
    let xpath = compiled.get(expression);
    if (xpath === undefined) {
      xpath = new CompiledXPath(expression);
      compiled.set(expression, xpath);
    }
    return xpath.selectString(message);
  };
}
