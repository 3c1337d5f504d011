/**
 * Whether a NetFlow v9 or IPFIX datagram carries template or options-template sets (v9 flowset ids 0 and 1, IPFIX set
 * ids 2 and 3): a filtered verbatim relay always passes those, or the far end could not decode the data it does pass.
 * Only the set headers are read; a datagram too short or inconsistent answers false (v5 has no templates).
 */
export function carriesTemplates(buf: Buffer): boolean {
  if (buf.length < 4) return false;
  const version = buf.readUInt16BE(0);
  if (version !== 9 && version !== 10) return false;
  const end = version === 10 ? Math.min(buf.length, buf.readUInt16BE(2)) : buf.length;
  let at = version === 9 ? 20 : 16;
  while (at + 4 <= end) {
    const id = buf.readUInt16BE(at);
    const length = buf.readUInt16BE(at + 2);
    if (version === 9 ? id <= 1 : id === 2 || id === 3) return true;
    if (length < 4) return false;
    at += length;
  }
  return false;
}
