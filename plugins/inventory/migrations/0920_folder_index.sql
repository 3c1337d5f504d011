-- Issue 29: every folder's path, effective pool and tags kept in a table, not walked on every read.
--
-- folder_paths was a recursive walk down from every root; every node page, node look-up and reader of node_directory
-- (the mutes' insert, the scope checks) planned and ran it again: 0.6 ms of planning and ~0.7 ms of execution of the
-- node list page's 1.8 ms. Folders change rarely and are few, so the walk now runs when they change: folder_index
-- holds its rows, kept by statement triggers on node_groups in the same transaction as the change, and folder_paths
-- reads the table. The walk itself stays as the view folder_walk (the old definition, unchanged).

CREATE VIEW folder_walk AS
WITH RECURSIVE walk AS (
  SELECT g.id, g.parent_id, ARRAY[g.id] AS path, ARRAY[g.name] AS names, g.pool AS effective_pool,
         ARRAY(SELECT DISTINCT t FROM unnest(g.tags) t WHERE t <> ALL (g.tags_excluded) ORDER BY t) AS effective_tags,
         0 AS depth
    FROM node_groups g WHERE g.parent_id IS NULL
  UNION ALL
  SELECT c.id, c.parent_id, w.path || c.id, w.names || c.name, coalesce(c.pool, w.effective_pool),
         ARRAY(SELECT DISTINCT t FROM unnest(w.effective_tags || c.tags) t WHERE t <> ALL (c.tags_excluded) ORDER BY t),
         w.depth + 1
    FROM node_groups c JOIN walk w ON c.parent_id = w.id
)
SELECT id, parent_id, path, names, effective_pool, effective_tags, depth FROM walk;

-- The walk's columns and types, exactly (folder_paths keeps its definition's types).
CREATE TABLE folder_index AS SELECT * FROM folder_walk WITH NO DATA;
ALTER TABLE folder_index ADD PRIMARY KEY (id);
INSERT INTO folder_index SELECT * FROM folder_walk;

-- Before any row of a changing statement: one folder-changing transaction at a time, so that the second one's walk
-- (after the first committed) sees the first's folders. Readers are not blocked (SHARE ROW EXCLUSIVE conflicts only
-- with writers of folder_index, which are these triggers). Taken before the rows change, so two transactions that
-- edit the same folders queue here instead of deadlocking between a row lock and this one.
CREATE FUNCTION folder_index_lock() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  LOCK TABLE folder_index IN SHARE ROW EXCLUSIVE MODE;
  RETURN NULL;
END
$$;

-- After the statement: the walk again, whole (a few ms for thousands of folders). Each statement of a volatile
-- PL/pgSQL function takes a new snapshot at READ COMMITTED, so the walk sees every folder committed before the lock
-- was granted, and this transaction's own changes.
CREATE FUNCTION folder_index_refresh() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  DELETE FROM folder_index;
  INSERT INTO folder_index SELECT * FROM folder_walk;
  RETURN NULL;
END
$$;

CREATE TRIGGER folder_index_lock BEFORE INSERT OR DELETE OR UPDATE OF parent_id, name, pool, tags, tags_excluded OR TRUNCATE ON node_groups
  FOR EACH STATEMENT EXECUTE FUNCTION folder_index_lock();
CREATE TRIGGER folder_index_refresh AFTER INSERT OR DELETE OR UPDATE OF parent_id, name, pool, tags, tags_excluded OR TRUNCATE ON node_groups
  FOR EACH STATEMENT EXECUTE FUNCTION folder_index_refresh();

CREATE OR REPLACE VIEW folder_paths AS
SELECT id, parent_id, path, names, effective_pool, effective_tags, depth FROM folder_index;

-- A node with what its folder gives it, as node_directory publishes it. Inventory's own node reads (the list page, a
-- node by id) read this view alone, where joining node_directory to nodes again cost a second look-up per row.
CREATE VIEW node_rows AS
SELECT n.*,
       coalesce(f.path, '{}'::uuid[]) AS folder_path,
       coalesce(f.names, '{}'::text[]) AS folder_names,
       coalesce(n.pool, f.effective_pool, 'default') AS effective_pool,
       ARRAY(SELECT DISTINCT t FROM unnest(coalesce(f.effective_tags, '{}'::text[]) || n.tags) t WHERE t <> ALL (n.tags_excluded) ORDER BY t) AS effective_tags
  FROM nodes n LEFT JOIN folder_index f ON f.id = n.group_id;

-- The published directory: the same columns, now from node_rows (one definition of the effective pool and tags).
CREATE OR REPLACE VIEW node_directory AS
SELECT n.id, n.name, n.address, n.group_id,
       n.folder_path,
       n.folder_names,
       n.effective_pool,
       n.effective_tags,
       n.profile_id, n.vendor, n.model,
       n.snmp_port, n.credential_id, p.poll_interval_secs,
       (SELECT jsonb_build_object('url', u.url, 'method', u.method, 'timeout_ms', u.timeout_ms, 'follow_redirects', u.follow_redirects,
                                  'verify_tls', u.verify_tls, 'expected_status', u.expected_status, 'body_match', u.body_match,
                                  'body_max_bytes', u.body_max_bytes, 'json_extract', u.json_extract, 'credential_id', u.credential_id)
          FROM url_checks u WHERE u.node_id = n.id) AS url_check,
       (SELECT jsonb_build_object('name', d.name, 'record_type', d.record_type, 'resolver_ip', host(d.resolver_ip),
                                  'resolver_port', d.resolver_port, 'timeout_ms', d.timeout_ms, 'max_depth', d.max_depth)
          FROM dns_checks d WHERE d.node_id = n.id) AS dns_check
  FROM node_rows n
  LEFT JOIN profiles p ON p.id = n.profile_id;

-- A folder's path by id is now a primary-key probe of folder_index (folder_path_of walked up, one probe per level).
CREATE OR REPLACE FUNCTION folder_path_of(folder uuid) RETURNS uuid[]
LANGUAGE sql STABLE SET search_path FROM CURRENT AS $$
  SELECT f.path FROM folder_index f WHERE f.id = folder
$$;
