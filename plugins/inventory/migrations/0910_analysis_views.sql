-- View published for the analysis plugin (read-only; named in contract.ts): every folder with its path and its IP ranges.
CREATE VIEW folder_ranges AS
  SELECT g.id, g.name, g.parent_id, coalesce(f.path, ARRAY[g.id]) AS folder_path, coalesce(f.names, ARRAY[g.name]) AS folder_names, g.ip_ranges
    FROM node_groups g LEFT JOIN folder_paths f ON f.id = g.id;
