/**
 * RFC 6587 stream decoder for syslog over TCP/TLS: one instance per connection, pure and synchronous.
 *
 * Each frame's first byte picks its framing (senders may not mix within a frame, but real relays do
 * switch between connections, and a few between frames): a digit means octet counting
 * ("<len> <msg>"), anything else non-transparent framing ending at LF (or NUL, which some senders
 * use). Frames wholly inside one chunk are handed out as zero-copy subarrays of it; only frames
 * split across chunks are copied.
 *
 * Size limits: a frame longer than `maxMessageBytes` is counted (sink.oversized) and skipped, and the
 * decoder resyncs (LF framing: discard to the next LF; octet counting: skip the announced bytes).
 * An octet count beyond `maxSkipBytes`, or a malformed count header, leaves no way to find the next
 * frame: push() returns false and the caller closes the connection.
 */

/** Receives what the decoder finds. Frames are only valid during the call (they may share the chunk's memory). */
export interface FrameSink {
  /** One complete message (no terminator, no length header). */
  frame(data: Buffer): void;
  /** A message over the size limit was skipped; `bytes` is its announced or (LF framing) seen-so-far size. */
  oversized(bytes: number): void;
  /** The connection ended inside an octet-counted frame or its header: the bytes received of it. */
  truncated(data: Buffer): void;
}

export interface FrameDecoderOptions {
  /** Largest message accepted (bytes). */
  maxMessageBytes: number;
  /** Largest octet count that is skipped rather than treated as a broken stream (default max(1 MiB, 16 × maxMessageBytes)). */
  maxSkipBytes?: number;
}

const LF = 10;
const CR = 13;
const SP = 32;
/** Length headers longer than this many digits are malformed (999,999,999 bytes). */
const MAX_LEN_DIGITS = 9;

const enum Mode {
  /** Between frames. */
  Start,
  /** Reading the digits of an octet count. */
  Length,
  /** Reading the announced bytes of an octet-counted frame. */
  Octets,
  /** Reading a non-transparent frame up to LF/NUL. */
  Line,
  /** Skipping the announced bytes of an oversized octet-counted frame. */
  SkipOctets,
  /** Discarding an oversized LF frame up to LF/NUL. */
  SkipLine,
  /** Unrecoverable: the caller should close. */
  Dead,
}

export class SyslogFrameDecoder {
  private mode = Mode.Start;
  /** Octet count being read, or bytes still expected/skipped. */
  private remaining = 0;
  private lengthDigits = 0;
  /** Parts of a frame split across chunks. */
  private parts: Buffer[] = [];
  private partsLength = 0;
  private readonly max: number;
  private readonly maxSkip: number;
  /** Why the stream was given up (set when push() returns false). */
  error: string | null = null;

  constructor(opts: FrameDecoderOptions) {
    this.max = opts.maxMessageBytes;
    this.maxSkip = Math.max(opts.maxSkipBytes ?? Math.max(1 << 20, 16 * opts.maxMessageBytes), this.max);
  }

  /** Feeds one chunk; returns false when the stream is broken and the connection should be closed. */
  push(chunk: Buffer, sink: FrameSink): boolean {
    const n = chunk.length;
    let i = 0;
    // Next NUL at or after i (n when none): cached so a chunk is searched for NULs once, not once per frame.
    let nextNul = -1;
    while (i < n) {
      switch (this.mode) {
        case Mode.Start: {
          const b = chunk[i];
          if (b === LF || b === CR || b === 0) {
            i++; // empty frame / stray terminator between frames
          } else if (b >= 48 && b <= 57) {
            if (b === 48) return this.die("octet count with a leading zero");
            this.mode = Mode.Length;
            this.remaining = 0;
            this.lengthDigits = 0;
            this.partsLength = 0;
          } else {
            this.mode = Mode.Line;
          }
          break;
        }
        case Mode.Length: {
          const b = chunk[i];
          if (b >= 48 && b <= 57) {
            this.remaining = this.remaining * 10 + (b - 48);
            if (++this.lengthDigits > MAX_LEN_DIGITS) return this.die("octet count too long");
            i++;
          } else if (b === SP) {
            i++;
            if (this.remaining > this.maxSkip) return this.die(`octet count ${this.remaining} beyond ${this.maxSkip} bytes`);
            if (this.remaining > this.max) {
              sink.oversized(this.remaining);
              this.mode = Mode.SkipOctets;
            } else {
              this.mode = Mode.Octets;
            }
          } else {
            return this.die("malformed octet count");
          }
          break;
        }
        case Mode.Octets: {
          const take = Math.min(this.remaining, n - i);
          if (take === this.remaining && this.parts.length === 0) {
            sink.frame(chunk.subarray(i, i + take));
          } else {
            // A part left waiting for the next chunk is copied: the caller may reuse the chunk's memory.
            this.parts.push(take === this.remaining ? chunk.subarray(i, i + take) : Buffer.from(chunk.subarray(i, i + take)));
            this.partsLength += take;
            if (take === this.remaining) sink.frame(this.takeParts());
          }
          i += take;
          this.remaining -= take;
          if (this.remaining === 0) this.mode = Mode.Start;
          break;
        }
        case Mode.SkipOctets: {
          const take = Math.min(this.remaining, n - i);
          i += take;
          this.remaining -= take;
          if (this.remaining === 0) this.mode = Mode.Start;
          break;
        }
        case Mode.Line:
        case Mode.SkipLine: {
          if (nextNul < i) {
            nextNul = chunk.indexOf(0, i);
            if (nextNul < 0) nextNul = n;
          }
          let end = chunk.indexOf(LF, i);
          if (end < 0 || end > nextNul) end = nextNul;
          const found = end < n;
          const len = (found ? end : n) - i;
          if (this.mode === Mode.SkipLine) {
            if (found) this.mode = Mode.Start;
          } else if (this.partsLength + len > this.max) {
            sink.oversized(this.partsLength + len);
            this.parts.length = 0;
            this.partsLength = 0;
            this.mode = found ? Mode.Start : Mode.SkipLine;
          } else if (found) {
            if (this.parts.length === 0) sink.frame(chunk.subarray(i, end));
            else {
              this.parts.push(chunk.subarray(i, end));
              this.partsLength += len;
              sink.frame(this.takeParts());
            }
            this.mode = Mode.Start;
          } else {
            // Keep a copy: the caller may reuse the chunk's memory after push() returns.
            this.parts.push(Buffer.from(chunk.subarray(i, n)));
            this.partsLength += len;
          }
          i = found ? end + 1 : n;
          break;
        }
        case Mode.Dead:
          return false;
      }
    }
    return true;
  }

  /**
   * The connection ended: an unterminated LF frame is still a message (many senders omit the last LF);
   * a partial octet-counted frame or length header is reported as truncated.
   */
  finish(sink: FrameSink): void {
    if (this.mode === Mode.Line && this.partsLength > 0) sink.frame(this.takeParts());
    else if (this.mode === Mode.Octets) sink.truncated(this.takeParts());
    else if (this.mode === Mode.Length) sink.truncated(Buffer.from(String(this.remaining), "latin1"));
    this.parts.length = 0;
    this.partsLength = 0;
    this.mode = Mode.Dead;
  }

  private takeParts(): Buffer {
    const b = this.parts.length === 1 ? this.parts[0] : Buffer.concat(this.parts, this.partsLength);
    this.parts.length = 0;
    this.partsLength = 0;
    return b;
  }

  private die(reason: string): false {
    this.error = reason;
    this.mode = Mode.Dead;
    this.parts.length = 0;
    this.partsLength = 0;
    return false;
  }
}
