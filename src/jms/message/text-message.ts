import { Message, type BodyType } from './message.js';

/** A message whose body is a string (MSG-4). */
export class TextMessage extends Message {
  #text: string | null;
  #byteLength = -1;

  constructor(text: string | null = null) {
    super();
    this.#text = text;
  }

  override get bodyType(): BodyType {
    return 'text';
  }

  getText(): string | null {
    return this.#text;
  }

  setText(text: string | null): void {
    this.checkBodyWritable();
    this.#text = text;
    this.#byteLength = -1;
    this.parsedBodyCache = undefined;
  }

  override clearBody(): void {
    super.clearBody();
    this.#text = null;
    this.#byteLength = -1;
  }

  override getBodySize(): number {
    // Measured once: quotas and statistics ask for it on every send.
    if (this.#byteLength < 0) this.#byteLength = this.#text === null ? 0 : Buffer.byteLength(this.#text);
    return this.#byteLength;
  }

  override getBody(): string | null {
    return this.#text;
  }

  protected override createEmpty(): Message {
    return new TextMessage();
  }

  protected override copyBodyInto(target: this): void {
    target.#text = this.#text;
    target.#byteLength = this.#byteLength;
  }
}
