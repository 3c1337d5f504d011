-- Issue 29, the API's write path.
-- nodes.parent_id references nodes ON DELETE SET NULL: without an index every node delete scanned every node for
-- children to detach.
CREATE INDEX nodes_parent_idx ON nodes (parent_id);

-- One folder's path (root first, the folder last), as folder_paths gives it, walked up from that folder: a lookup by
-- id costs the folder's depth, where the view's recursive walk down from every root cannot take the id and builds
-- the whole tree (and its plan) each time. NULL when the folder does not exist or does not reach a root (a cycle), as
-- the view has no row for it then. PL/pgSQL keeps the step's plan for the session; the function keeps the migration's
-- search_path (this schema).
CREATE FUNCTION folder_path_of(folder uuid) RETURNS uuid[]
LANGUAGE plpgsql STABLE SET search_path FROM CURRENT AS $$
DECLARE
  path uuid[] := '{}';
  cur uuid := folder;
  up uuid;
BEGIN
  WHILE cur IS NOT NULL LOOP
    IF cur = ANY (path) THEN
      RETURN NULL;
    END IF;
    SELECT g.parent_id INTO up FROM node_groups g WHERE g.id = cur;
    IF NOT FOUND THEN
      RETURN NULL;
    END IF;
    path := cur || path;
    cur := up;
  END LOOP;
  RETURN path;
END
$$;
