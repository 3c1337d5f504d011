/**
 * Information elements the decoder reads (IANA IPFIX numbers; v9 field types 1-127 are the same numbers), and a
 * template compiled to a flat plan: one role per field, so decoding a record is a loop over small integers.
 */
import type { TemplateField } from "./types.js";

export const VARLEN = 65535;

/**
 * What the decoder does with a field. SKIP for anything it does not use (and every enterprise field). The groups are
 * contiguous, first to last: the decoder picks a group's reader by range (see RecordFields in decoder.ts).
 */
export const enum Role {
  SKIP = 0,
  // Counters.
  BYTES,
  PACKETS,
  OUT_BYTES,
  OUT_PACKETS,
  TOTAL_BYTES,
  TOTAL_PACKETS,
  // Flow key: protocol, ports, addresses, interfaces, AS numbers.
  PROTO,
  TCP_FLAGS,
  SRC_PORT,
  DST_PORT,
  UDP_SRC_PORT,
  UDP_DST_PORT,
  TCP_SRC_PORT,
  TCP_DST_PORT,
  ICMP_TYPE_CODE,
  SRC4,
  DST4,
  SRC6,
  DST6,
  IN_IF,
  OUT_IF,
  SRC_AS,
  DST_AS,
  // Times. FIRST/LAST_UPTIME are sysUpTime-relative (v9 FIRST/LAST_SWITCHED, IPFIX 22/21).
  FIRST_UPTIME,
  LAST_UPTIME,
  START_SEC,
  END_SEC,
  START_MS,
  END_MS,
  START_US_NTP,
  END_US_NTP,
  START_NS_NTP,
  END_NS_NTP,
  START_DELTA_US,
  END_DELTA_US,
  SYS_INIT_MS,
  // Sampling.
  SAMPLING_INTERVAL,
  SAMPLING_PKT_INTERVAL,
  SAMPLING_PKT_SPACE,
  SAMPLER_ID,
  SAMPLER_RANDOM_INTERVAL,
}

const BY_IE: Record<number, Role> = {
  1: Role.BYTES,
  2: Role.PACKETS,
  4: Role.PROTO,
  6: Role.TCP_FLAGS,
  7: Role.SRC_PORT,
  8: Role.SRC4,
  10: Role.IN_IF,
  11: Role.DST_PORT,
  12: Role.DST4,
  14: Role.OUT_IF,
  16: Role.SRC_AS,
  17: Role.DST_AS,
  21: Role.LAST_UPTIME,
  22: Role.FIRST_UPTIME,
  23: Role.OUT_BYTES,
  24: Role.OUT_PACKETS,
  27: Role.SRC6,
  28: Role.DST6,
  32: Role.ICMP_TYPE_CODE,
  34: Role.SAMPLING_INTERVAL,
  48: Role.SAMPLER_ID,
  50: Role.SAMPLER_RANDOM_INTERVAL,
  85: Role.TOTAL_BYTES,
  86: Role.TOTAL_PACKETS,
  139: Role.ICMP_TYPE_CODE,
  150: Role.START_SEC,
  151: Role.END_SEC,
  152: Role.START_MS,
  153: Role.END_MS,
  154: Role.START_US_NTP,
  155: Role.END_US_NTP,
  156: Role.START_NS_NTP,
  157: Role.END_NS_NTP,
  158: Role.START_DELTA_US,
  159: Role.END_DELTA_US,
  160: Role.SYS_INIT_MS,
  180: Role.UDP_SRC_PORT,
  181: Role.UDP_DST_PORT,
  182: Role.TCP_SRC_PORT,
  183: Role.TCP_DST_PORT,
  302: Role.SAMPLER_ID,
  305: Role.SAMPLING_PKT_INTERVAL,
  306: Role.SAMPLING_PKT_SPACE,
};

/** The lengths each address role accepts; integer roles accept 1-8 bytes. */
function fits(role: Role, length: number): boolean {
  switch (role) {
    case Role.SRC4:
    case Role.DST4:
      return length === 4;
    case Role.SRC6:
    case Role.DST6:
      return length === 16;
    case Role.START_US_NTP:
    case Role.END_US_NTP:
    case Role.START_NS_NTP:
    case Role.END_NS_NTP:
      return length === 8;
    default:
      return length >= 1 && length <= 8;
  }
}

/** A template ready for decoding. `offsets` are valid only when `variable` is false. */
export interface Plan {
  roles: Uint8Array;
  lengths: Uint16Array;
  offsets: Uint32Array;
  /** Shortest possible record (a variable-length field counts 1 byte): data shorter than this is padding. */
  minLength: number;
  variable: boolean;
}

/** Compiles fields; `scope` leading fields of a v9 options template use scope type numbers, not IEs, and are skipped. */
export function compile(fields: readonly TemplateField[], skipLeading: number): Plan {
  const n = fields.length;
  const roles = new Uint8Array(n);
  const lengths = new Uint16Array(n);
  const offsets = new Uint32Array(n);
  let offset = 0;
  let variable = false;
  for (let i = 0; i < n; i++) {
    const f = fields[i];
    lengths[i] = f.length;
    offsets[i] = offset;
    if (f.length === VARLEN) {
      variable = true;
      offset += 1;
      continue;
    }
    offset += f.length;
    if (i < skipLeading || f.enterprise !== 0) continue;
    const role = BY_IE[f.id] ?? Role.SKIP;
    roles[i] = role !== Role.SKIP && fits(role, f.length) ? role : Role.SKIP;
  }
  return { roles, lengths, offsets, minLength: offset, variable };
}
