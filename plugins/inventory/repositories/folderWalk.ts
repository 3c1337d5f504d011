/**
 * The folder path (root first, the folder last) of the folder `groupExpr` names, as inventory.folder_paths gives it:
 * one primary-key probe of inventory.folder_index (migration 0920), which the folder triggers keep. NULL when the
 * folder does not exist or does not reach a root, as the view has no row then.
 */
export function folderPathOf(groupExpr: string): string {
  return `(SELECT fi.path FROM inventory.folder_index fi WHERE fi.id = ${groupExpr})`;
}

/** A node's folder path as inventory.node_directory gives it: '{}' at the tree root (and for an unrooted folder). */
export function nodeFolderPathOf(groupExpr: string): string {
  return `coalesce(${folderPathOf(groupExpr)}, '{}'::uuid[])`;
}
