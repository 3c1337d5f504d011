/**
 * Which export datagrams every decoder must see. The ingest spreads one exporter's datagrams over several decoder
 * threads, and a NetFlow v9 / IPFIX data set can be read only with its template: so a datagram that defines or
 * withdraws templates goes to all decoders (to one of them whole, to the others for its templates only), and so does
 * one that carries options data (the sampling rates every decoder applies). The options data sets are known by the
 * ids of the options templates seen before, per exporter and observation domain. Plain code with no imports: the
 * reader threads run it on every datagram, so it only walks the set headers.
 */

/** The options template ids one exporter's domain defined (key: `address|version|domain`). */
export class TemplateSpread {
  private readonly optionIds = new Map<string, Set<number>>();

  /** Whether every decoder must see this datagram (template sets, or options data); false for v5 and plain data. */
  everyDecoder(buf: Uint8Array, length: number, exporter: string): boolean {
    if (length < 16) return false;
    const version = (buf[0] << 8) | buf[1];
    if (version !== 9 && version !== 10) return false;
    const head = version === 9 ? 20 : 16;
    if (length < head) return false;
    const d = version === 9 ? 16 : 12;
    const domain = ((buf[d] << 24) | (buf[d + 1] << 16) | (buf[d + 2] << 8) | buf[d + 3]) >>> 0;
    const key = `${exporter}|${version}|${domain}`;
    const optionsSet = version === 9 ? 1 : 3;
    let known = this.optionIds.get(key);
    let all = false;
    for (let p = head; p + 4 <= length;) {
      const id = (buf[p] << 8) | buf[p + 1];
      const setLen = (buf[p + 2] << 8) | buf[p + 3];
      if (setLen < 4 || p + setLen > length) break;
      if (id < 256) {
        all = true;
        if (id === optionsSet) {
          known ??= new Set();
          this.optionIds.set(key, known);
          this.readOptionIds(buf, p + 4, p + setLen, version === 10, known);
        }
      } else if (known?.has(id)) all = true;
      p += setLen;
    }
    return all;
  }

  /** The template ids an options template set defines (an IPFIX withdrawal, field count 0, is skipped). */
  private readOptionIds(buf: Uint8Array, q: number, end: number, ipfix: boolean, into: Set<number>): void {
    const u16 = (at: number) => (buf[at] << 8) | buf[at + 1];
    while (end - q >= (ipfix ? 4 : 6)) {
      const id = u16(q);
      if (!ipfix) {
        // v9: id, scope length and option length in bytes, then the fields.
        const len = u16(q + 2) + u16(q + 4);
        if (id < 256) return;
        into.add(id);
        q += 6 + len;
        continue;
      }
      const fields = u16(q + 2);
      if (id < 256) return;
      if (fields === 0) {
        q += 4;
        continue;
      }
      into.add(id);
      q += 6;
      for (let i = 0; i < fields && q + 4 <= end; i++) q += buf[q] & 0x80 ? 8 : 4;
    }
  }

  /** Exporter domains known. */
  get size(): number {
    return this.optionIds.size;
  }
}
