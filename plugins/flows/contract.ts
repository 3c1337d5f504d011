/** The flows plugin's public contract: the bus event other plugins (the forwarding tee) subscribe to. */
import type { FlowRecord } from "./decode/types.js";

export type { FlowRecord } from "./decode/types.js";

/** One export datagram this replica's listener received, with what decoded from it. */
export interface ReceivedDatagram {
  /** The exporter's address (the datagram's source). */
  exporter: string;
  received_at_ms: number;
  /** The datagram as received (NetFlow v5, v9 or IPFIX), for a verbatim relay. */
  bytes: Buffer;
  /** The flow records it carried (none for a template-only datagram, or data still waiting for its template). */
  records: readonly FlowRecord[];
}

declare module "../../core/bus/EventBus.js" {
  interface BusEvents {
    /**
     * What this replica's flows listener received (not what remote pollers forwarded), batched per turn of the
     * event loop; the forwarding tee subscribes to it.
     */
    "flows.received": { datagrams: readonly ReceivedDatagram[] };
  }
}

/** Read-only views for the reports plugin (migration 0900): minute and hour rollups, AS prefixes and AS names. */
export const REPORT_FLOWS_1M_VIEW = "flows.report_flows_1m";
export const REPORT_FLOWS_1H_VIEW = "flows.report_flows_1h";
export const REPORT_ASN_PREFIXES_VIEW = "flows.report_asn_prefixes";
export const REPORT_ASN_NAMES_VIEW = "flows.report_asn_names";
