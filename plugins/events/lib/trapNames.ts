/**
 * Names of common SNMP notifications and of the objects their varbinds carry, so a trap reads "IF-MIB::linkDown"
 * rather than 1.3.6.1.6.3.1.1.5.3. OIDs are from the MIB modules named (the IETF ones and a few vendor BGP4-V2
 * forms). Users add their own OIDs (GET/POST/PUT/DELETE /events/trap-names); a user row with a built-in OID wins.
 */

export type TrapNameKind = "notification" | "object";

export interface BuiltinTrapName {
  oid: string;
  /** MODULE::name */
  name: string;
  kind: TrapNameKind;
  description: string;
}

const n = (oid: string, name: string, description: string): BuiltinTrapName => ({ oid, name, kind: "notification", description });
const o = (oid: string, name: string, description: string): BuiltinTrapName => ({ oid, name, kind: "object", description });

const OSPF = "1.3.6.1.2.1.14.16.2";
const OSPF_TRAPS: [number, string, string][] = [
  [1, "ospfVirtIfStateChange", "A virtual interface changed state"],
  [2, "ospfNbrStateChange", "An OSPF neighbour changed state"],
  [3, "ospfVirtNbrStateChange", "A virtual neighbour changed state"],
  [4, "ospfIfConfigError", "A packet from a router with conflicting configuration"],
  [5, "ospfVirtIfConfigError", "A virtual-link packet with conflicting configuration"],
  [6, "ospfIfAuthFailure", "A packet failed authentication"],
  [7, "ospfVirtIfAuthFailure", "A virtual-link packet failed authentication"],
  [8, "ospfIfRxBadPacket", "A packet that could not be parsed"],
  [9, "ospfVirtIfRxBadPacket", "A virtual-link packet that could not be parsed"],
  [10, "ospfTxRetransmit", "A packet was retransmitted"],
  [11, "ospfVirtIfTxRetransmit", "A virtual-link packet was retransmitted"],
  [12, "ospfOriginateLsa", "The router originated a new LSA"],
  [13, "ospfMaxAgeLsa", "An LSA reached MaxAge"],
  [14, "ospfLsdbOverflow", "The external LSA count reached the overflow limit"],
  [15, "ospfLsdbApproachingOverflow", "The external LSA count is near the overflow limit"],
  [16, "ospfIfStateChange", "An OSPF interface changed state"],
  [17, "ospfNssaTranslatorStatusChange", "The NSSA translator status changed"],
  [18, "ospfRestartStatusChange", "The graceful restart status changed"],
  [19, "ospfNbrRestartHelperStatusChange", "A neighbour's restart helper status changed"],
  [20, "ospfVirtNbrRestartHelperStatusChange", "A virtual neighbour's restart helper status changed"],
];

export const BUILTIN_TRAP_NAMES: readonly BuiltinTrapName[] = [
  // SNMPv2-MIB / IF-MIB generic traps (v1 generic 0..5 map to these, RFC 3584)
  n("1.3.6.1.6.3.1.1.5.1", "SNMPv2-MIB::coldStart", "The agent restarted; its configuration may have changed"),
  n("1.3.6.1.6.3.1.1.5.2", "SNMPv2-MIB::warmStart", "The agent reinitialised without configuration changes"),
  n("1.3.6.1.6.3.1.1.5.3", "IF-MIB::linkDown", "An interface went down"),
  n("1.3.6.1.6.3.1.1.5.4", "IF-MIB::linkUp", "An interface came up"),
  n("1.3.6.1.6.3.1.1.5.5", "SNMPv2-MIB::authenticationFailure", "A request failed authentication"),
  n("1.3.6.1.6.3.1.1.5.6", "RFC1213-MIB::egpNeighborLoss", "An EGP neighbour was lost"),
  // ENTITY-MIB, ENTITY-STATE-MIB
  n("1.3.6.1.2.1.47.2.0.1", "ENTITY-MIB::entConfigChange", "The physical entity table changed"),
  n("1.3.6.1.2.1.131.0.1", "ENTITY-STATE-MIB::entStateOperEnabled", "An entity became operationally enabled"),
  n("1.3.6.1.2.1.131.0.2", "ENTITY-STATE-MIB::entStateOperDisabled", "An entity became operationally disabled"),
  // BGP4-MIB: RFC 4273 forms, the RFC 1657 forms (bgpTraps), and the v1 enterprise form (bgpTraps.0.n)
  n("1.3.6.1.2.1.15.0.1", "BGP4-MIB::bgpEstablishedNotification", "A BGP session reached Established"),
  n("1.3.6.1.2.1.15.0.2", "BGP4-MIB::bgpBackwardTransNotification", "A BGP session left Established (or moved to a lower state)"),
  n("1.3.6.1.2.1.15.7.1", "BGP4-MIB::bgpEstablished", "A BGP session reached Established (RFC 1657)"),
  n("1.3.6.1.2.1.15.7.2", "BGP4-MIB::bgpBackwardTransition", "A BGP session moved to a lower state (RFC 1657)"),
  n("1.3.6.1.2.1.15.7.0.1", "BGP4-MIB::bgpEstablished", "A BGP session reached Established (SNMPv1 trap)"),
  n("1.3.6.1.2.1.15.7.0.2", "BGP4-MIB::bgpBackwardTransition", "A BGP session moved to a lower state (SNMPv1 trap)"),
  // BGP4-V2 forms (vendor-rooted drafts of the BGP4-V2 MIB)
  n("1.3.6.1.4.1.2636.5.1.1.1.0.1", "BGP4-V2-MIB-JUNIPER::jnxBgpM2Established", "A BGP session reached Established"),
  n("1.3.6.1.4.1.2636.5.1.1.1.0.2", "BGP4-V2-MIB-JUNIPER::jnxBgpM2BackwardTransition", "A BGP session moved to a lower state"),
  n("1.3.6.1.4.1.30065.4.1.0.1", "ARISTA-BGP4V2-MIB::aristaBgp4V2EstablishedNotification", "A BGP session reached Established"),
  n("1.3.6.1.4.1.30065.4.1.0.2", "ARISTA-BGP4V2-MIB::aristaBgp4V2BackwardTransitionNotification", "A BGP session moved to a lower state"),
  n("1.3.6.1.4.1.9.9.187.0.1", "CISCO-BGP4-MIB::cbgpFsmStateChange", "A BGP peer's FSM changed state"),
  n("1.3.6.1.4.1.9.9.187.0.2", "CISCO-BGP4-MIB::cbgpBackwardTransition", "A BGP peer moved to a lower state"),
  // OSPF-MIB
  ...OSPF_TRAPS.map(([i, name, d]) => n(`${OSPF}.${i}`, `OSPF-MIB::${name}`, d)),
  // RMON-MIB, BRIDGE-MIB, VRRP-MIB, DISMAN-EVENT-MIB, UPS-MIB, POWER-ETHERNET-MIB, LLDP-MIB
  n("1.3.6.1.2.1.16.0.1", "RMON-MIB::risingAlarm", "An RMON alarm crossed its rising threshold"),
  n("1.3.6.1.2.1.16.0.2", "RMON-MIB::fallingAlarm", "An RMON alarm crossed its falling threshold"),
  n("1.3.6.1.2.1.17.0.1", "BRIDGE-MIB::newRoot", "The bridge became the new spanning-tree root"),
  n("1.3.6.1.2.1.17.0.2", "BRIDGE-MIB::topologyChange", "A spanning-tree port changed state (topology change)"),
  n("1.3.6.1.2.1.68.0.1", "VRRP-MIB::vrrpTrapNewMaster", "The router became VRRP master"),
  n("1.3.6.1.2.1.68.0.2", "VRRP-MIB::vrrpTrapAuthFailure", "A VRRP packet failed authentication"),
  n("1.3.6.1.2.1.88.2.0.1", "DISMAN-EVENT-MIB::mteTriggerFired", "An event trigger fired"),
  n("1.3.6.1.2.1.88.2.0.2", "DISMAN-EVENT-MIB::mteTriggerRising", "An event trigger crossed its rising threshold"),
  n("1.3.6.1.2.1.88.2.0.3", "DISMAN-EVENT-MIB::mteTriggerFalling", "An event trigger crossed its falling threshold"),
  n("1.3.6.1.2.1.88.2.0.4", "DISMAN-EVENT-MIB::mteTriggerFailure", "An event trigger could not be evaluated"),
  n("1.3.6.1.2.1.88.2.0.5", "DISMAN-EVENT-MIB::mteEventSetFailure", "An event's set operation failed"),
  n("1.3.6.1.2.1.33.2.1", "UPS-MIB::upsTrapOnBattery", "The UPS is running on battery"),
  n("1.3.6.1.2.1.33.2.2", "UPS-MIB::upsTrapTestCompleted", "A UPS self-test completed"),
  n("1.3.6.1.2.1.33.2.3", "UPS-MIB::upsTrapAlarmEntryAdded", "A UPS alarm was raised"),
  n("1.3.6.1.2.1.33.2.4", "UPS-MIB::upsTrapAlarmEntryRemoved", "A UPS alarm was cleared"),
  n("1.3.6.1.2.1.105.0.1", "POWER-ETHERNET-MIB::pethPsePortOnOffNotification", "A PoE port started or stopped delivering power"),
  n("1.3.6.1.2.1.105.0.2", "POWER-ETHERNET-MIB::pethMainPowerUsageOnNotification", "PoE power usage crossed its threshold"),
  n("1.3.6.1.2.1.105.0.3", "POWER-ETHERNET-MIB::pethMainPowerUsageOffNotification", "PoE power usage fell below its threshold"),
  n("1.0.8802.1.1.2.0.0.1", "LLDP-MIB::lldpRemTablesChange", "The LLDP neighbour table changed"),
  // Net-SNMP agent, Cisco configuration
  n("1.3.6.1.4.1.8072.4.0.1", "NET-SNMP-AGENT-MIB::nsNotifyStart", "The Net-SNMP agent started"),
  n("1.3.6.1.4.1.8072.4.0.2", "NET-SNMP-AGENT-MIB::nsNotifyShutdown", "The Net-SNMP agent is shutting down"),
  n("1.3.6.1.4.1.8072.4.0.3", "NET-SNMP-AGENT-MIB::nsNotifyRestart", "The Net-SNMP agent restarted"),
  n("1.3.6.1.4.1.9.9.43.2.0.1", "CISCO-CONFIG-MAN-MIB::ciscoConfigManEvent", "The configuration was changed or saved"),

  // Objects the varbinds of these carry (named with their instance suffix: IF-MIB::ifIndex.2)
  o("1.3.6.1.2.1.1.1", "SNMPv2-MIB::sysDescr", "System description"),
  o("1.3.6.1.2.1.1.3", "SNMPv2-MIB::sysUpTime", "Time since the agent started, hundredths of a second"),
  o("1.3.6.1.2.1.1.5", "SNMPv2-MIB::sysName", "System name"),
  o("1.3.6.1.6.3.1.1.4.1", "SNMPv2-MIB::snmpTrapOID", "The notification's OID"),
  o("1.3.6.1.6.3.1.1.4.3", "SNMPv2-MIB::snmpTrapEnterprise", "The v1 trap's enterprise"),
  o("1.3.6.1.6.3.18.1.3", "SNMP-COMMUNITY-MIB::snmpTrapAddress", "The v1 trap's agent address"),
  o("1.3.6.1.2.1.2.2.1.1", "IF-MIB::ifIndex", "Interface index"),
  o("1.3.6.1.2.1.2.2.1.2", "IF-MIB::ifDescr", "Interface description"),
  o("1.3.6.1.2.1.2.2.1.3", "IF-MIB::ifType", "Interface type"),
  o("1.3.6.1.2.1.2.2.1.7", "IF-MIB::ifAdminStatus", "Administrative status (1 up, 2 down, 3 testing)"),
  o("1.3.6.1.2.1.2.2.1.8", "IF-MIB::ifOperStatus", "Operational status (1 up, 2 down, …)"),
  o("1.3.6.1.2.1.31.1.1.1.1", "IF-MIB::ifName", "Interface name"),
  o("1.3.6.1.2.1.31.1.1.1.18", "IF-MIB::ifAlias", "Interface alias"),
  o("1.3.6.1.2.1.47.1.4.1", "ENTITY-MIB::entLastChangeTime", "When the entity table last changed"),
  o("1.3.6.1.2.1.15.3.1.2", "BGP4-MIB::bgpPeerState", "BGP peer state (1 idle … 6 established)"),
  o("1.3.6.1.2.1.15.3.1.7", "BGP4-MIB::bgpPeerRemoteAddr", "BGP peer address"),
  o("1.3.6.1.2.1.15.3.1.14", "BGP4-MIB::bgpPeerLastError", "Last BGP error code and subcode"),
  o("1.3.6.1.2.1.14.1.1", "OSPF-MIB::ospfRouterId", "OSPF router id"),
  o("1.3.6.1.2.1.14.7.1.1", "OSPF-MIB::ospfIfIpAddress", "OSPF interface address"),
  o("1.3.6.1.2.1.14.7.1.12", "OSPF-MIB::ospfIfState", "OSPF interface state"),
  o("1.3.6.1.2.1.14.10.1.1", "OSPF-MIB::ospfNbrIpAddr", "OSPF neighbour address"),
  o("1.3.6.1.2.1.14.10.1.3", "OSPF-MIB::ospfNbrRtrId", "OSPF neighbour router id"),
  o("1.3.6.1.2.1.14.10.1.6", "OSPF-MIB::ospfNbrState", "OSPF neighbour state (8 full)"),
  o("1.3.6.1.2.1.68.1.3.1.7", "VRRP-MIB::vrrpOperMasterIpAddr", "VRRP master address"),
];

/**
 * The name of `oid` in `names` (OID → name): an exact entry, else the longest entry it lies under with the rest as
 * the instance suffix ("IF-MIB::ifIndex.2"). Only object entries are matched by prefix.
 */
export function nameOf(oid: string, exact: ReadonlyMap<string, string>, objects: ReadonlyMap<string, string>): string | null {
  const hit = exact.get(oid);
  if (hit !== undefined) return hit;
  const parts = oid.split(".");
  for (let i = parts.length - 1; i > 0; i--) {
    const name = objects.get(parts.slice(0, i).join("."));
    if (name !== undefined) return `${name}.${parts.slice(i).join(".")}`;
  }
  return null;
}
