import {
  AdditionalProperties,
  CollectionOf,
  Default,
  Description,
  Format,
  Integer,
  MaxItems,
  MaxLength,
  Maximum,
  Minimum,
  MinLength,
  Nullable,
  Optional,
  Required,
} from "@tsed/schema";

const POOL_DOC =
  "Poller pool: letters, digits, _ and -, at most 63 characters (else 400 invalid_pool); null or empty = inherit from the folder above, else the default pool";
const RANGES_DOC =
  "CIDR ranges (IPv4 and IPv6) used when filing by prefix. Host bits are cleared (10.1.2.3/24 is stored as 10.1.2.0/24); a bare address is a single-host range (/32, /128); repeats are dropped";

/** The query of GET /node-groups: the parent filter, a name filter and the keyset cursor. */
export class FolderListQuery {
  @Format("uuid") @Description("Only the direct sub-folders of this folder") parent_id?: string;
  @MaxLength(200) @Description("Name contains this (case-insensitive)") q?: string;
  @Integer() @Minimum(1) @Maximum(1000) limit: number = 100;
  @MaxLength(2000) cursor?: string;
}

/**
 * Create body, and the full document of an update (PUT): a field left out of an update
 * takes its default (no parent = the tree root, no pool, no tags, no ranges).
 */
@AdditionalProperties(false)
@Description("Body of POST /node-groups and of the full-document PUT /node-groups/{id}.")
export class FolderWrite {
  @Required()
  @MinLength(1)
  @MaxLength(200)
  @Description("Shown name; trimmed, must not be blank")
  name: string;

  @Optional()
  @Nullable(String)
  @Format("uuid")
  @Description("Parent folder; null or omitted = the tree root (not allowed for a folder-scoped caller)")
  parent_id?: string | null;

  @Description("Free-form kind of folder, for example folder or site; default folder")
  @Optional()
  @MinLength(1)
  @MaxLength(40)
  @Default("folder")
  group_type?: string;

  @Optional()
  @Nullable(String)
  @Description(POOL_DOC)
  pool?: string | null;

  @Description("Map position, degrees from -90 to 90; null = not placed")
  @Optional()
  @Nullable(Number)
  @Minimum(-90)
  @Maximum(90)
  latitude?: number | null;

  @Description("Map position, degrees from -180 to 180; null = not placed")
  @Optional()
  @Nullable(Number)
  @Minimum(-180)
  @Maximum(180)
  longitude?: number | null;

  @Optional()
  @Description("Position among siblings (ascending, then name); default 0")
  sort_order?: number;

  @Optional()
  @CollectionOf(String)
  @MaxItems(64)
  @MaxLength(64)
  @Description("Labels supplied to everything beneath; trimmed, distinct, at most 64 of 1 to 64 characters")
  tags?: string[];

  @Optional()
  @CollectionOf(String)
  @MaxItems(64)
  @MaxLength(64)
  @Description("Labels refused from the folders above")
  tags_excluded?: string[];

  @Optional()
  @CollectionOf(String)
  @MaxItems(256)
  @MaxLength(64)
  @Description(RANGES_DOC)
  ip_ranges?: string[];
}

@AdditionalProperties(false)
@Description("Body of PUT /node-groups/{id}/pool: the folder's poller pool, or none.")
export class FolderPoolUpdate {
  @Optional()
  @Nullable(String)
  @Description("The folder's own pool; null, empty or omitted clears it. " + POOL_DOC)
  pool?: string | null;
}

@Description("A folder (node group) as answered, with its effective pool and tags (GET /node-groups, GET /node-groups/{id}).")
export class FolderView {
  @Required() @Format("uuid") id: string;
  @Required() name: string;
  @Description("Parent folder; null = the tree root") @Required() @Nullable(String) @Format("uuid") parent_id: string | null;
  @Description("Free-form kind of folder, for example folder or site") @Required() group_type: string;
  @Required() @Nullable(String) @Description("The folder's own pool") pool: string | null;
  @Required() @Description("Its own pool, else the nearest folder's above, else default") effective_pool: string;
  @Description("Map position, degrees; null = not placed") @Required() @Nullable(Number) latitude: number | null;
  @Description("Map position, degrees; null = not placed") @Required() @Nullable(Number) longitude: number | null;
  @Description("Position among siblings (ascending, then name)") @Required() sort_order: number;
  @Description("Labels supplied to everything beneath") @Required() @CollectionOf(String) tags: string[];
  @Description("Labels refused from the folders above") @Required() @CollectionOf(String) tags_excluded: string[];
  @Required()
  @CollectionOf(String)
  @Description("Tags inherited from the folders above plus its own, minus tags_excluded at each level")
  effective_tags: string[];
  @Required() @CollectionOf(String) @Description(RANGES_DOC) ip_ranges: string[];
  @Required() @Format("date-time") created_at: string;
  @Required() @Format("date-time") updated_at: string;
}

@Description("A folder of the folder tree with its node counts and child folders (GET /node-groups/tree).")
export class FolderTreeNode {
  @Required() @Format("uuid") id: string;
  @Required() name: string;
  @Description("Parent folder; null = the tree root") @Required() @Nullable(String) @Format("uuid") parent_id: string | null;
  @Description("Free-form kind of folder, for example folder or site") @Required() group_type: string;
  @Description("The folder's own pool") @Required() @Nullable(String) pool: string | null;
  @Description("Its own pool, else the nearest folder's above, else default") @Required() effective_pool: string;
  @Description("Position among siblings (ascending, then name)") @Required() sort_order: number;
  @Required() @Description("Nodes filed directly in this folder") node_count: number;
  @Required() @Description("Nodes in this folder and everything beneath it") total_node_count: number;
  @Required() @Description("The caller has pinned this folder (always false for API tokens)") pinned: boolean;
  @Required() @CollectionOf(() => FolderTreeNode) @Description("Sub-folders, by sort_order then name") children: FolderTreeNode[];
}
