/**
 * The folder path (root first, the folder last) of the folder `groupExpr` names, as inventory.folder_paths gives it,
 * walked up from that one folder (inventory.folder_path_of, migration 0080) instead of down from every root: a node's
 * or a folder's lookup by id then costs its depth, not the whole folder tree. NULL when the folder does not exist or
 * does not reach a root, as the view has no row then.
 */
export function folderPathOf(groupExpr: string): string {
  return `inventory.folder_path_of(${groupExpr})`;
}

/** A node's folder path as inventory.node_directory gives it: '{}' at the tree root (and for an unrooted folder). */
export function nodeFolderPathOf(groupExpr: string): string {
  return `coalesce(${folderPathOf(groupExpr)}, '{}'::uuid[])`;
}
