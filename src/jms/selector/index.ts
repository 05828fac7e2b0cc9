/**
 * Message selectors (SEL-1..7): the JMS SQL-92 subset, WebLogic's `JMS_BEA_SELECT` and the
 * ActiveMQ/Artemis `XPATH` form on XML bodies, and the subscriber index for topic fan-out.
 */
export { parseSelector, type MessageSelector } from './message-selector.js';
export { SubscriberIndex } from './subscriber-index.js';
export { formatTruth, formatValue } from './explain.js';
export type { Explanation, XPathExplanation } from './explanation.js';
export type { Truth } from './truth.js';
export {
  DEFAULT_XPATH_LIMITS,
  setXPathLimits,
  setXPathLimitListener,
  xpathLimitCounts,
  xpathLimits,
  type XPathLimitListener,
  type XPathLimitName,
  type XPathLimits,
} from './xpath/xpath-limits.js';
