/**
 * The topology plugin's public contract: the Upstream token (each node's inferred or pinned parent and its upstream
 * path, for the alerts plugin's root-cause work) and the bus events of links that appear and go.
 * It imports no service and no repository of the plugin.
 */

/** Each node's place in the dependency tree: inferred from the links from its pool's seed node; a pinned parent wins. */
export abstract class Upstream {
  /** The node `nodeId` depends on (its pinned parent, else the next node towards its pool's seed); null at a seed or when not linked. */
  abstract parentOf(nodeId: string): Promise<string | null>;
  /** The nodes between `nodeId` and its pool's seed: its parent first, the seed last; empty at a seed or when not linked. */
  abstract pathOf(nodeId: string): Promise<string[]>;
}

/** A link between two nodes (either end may be the one that reported it). */
export interface TopologyLinkEvent {
  id: string;
  a_node: string;
  a_port: string | null;
  b_node: string;
  b_port: string | null;
  protocols: string[];
}

declare module "../../core/bus/EventBus.js" {
  interface BusEvents {
    /** A link is seen for the first time, or again after it was marked gone. */
    "topology.link.up": TopologyLinkEvent;
    /** A link was not seen for goneAfterPolls polls of its ends and is marked gone (its row is kept). */
    "topology.link.gone": TopologyLinkEvent;
  }
}
