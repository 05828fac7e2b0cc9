/** Session acknowledge modes, numbered as in JMS (and WebLogic for NO_ACKNOWLEDGE) (SES-2). */
export const AcknowledgeMode = {
  /** The session is transacted: commit and rollback decide; the mode is ignored. */
  SESSION_TRANSACTED: 0,
  /** Acknowledged when `receive` returns or the listener returns normally. */
  AUTO_ACKNOWLEDGE: 1,
  /** Acknowledged by `message.acknowledge()`, per the factory's acknowledge policy. */
  CLIENT_ACKNOWLEDGE: 2,
  /** Acknowledged lazily; duplicates are possible after a failure. */
  DUPS_OK_ACKNOWLEDGE: 3,
  /** Removed at delivery: loss and duplicates are possible (WebLogic's NO_ACKNOWLEDGE). */
  NO_ACKNOWLEDGE: 4,
} as const;

export type AcknowledgeModeValue = (typeof AcknowledgeMode)[keyof typeof AcknowledgeMode];

/** What `message.acknowledge()` covers in CLIENT_ACKNOWLEDGE mode (SES-2). */
export type AcknowledgePolicy = 'all' | 'previous';
