-- Published for other plugins (polling's collection templates): every profile with its ancestors,
-- itself first, then its parent, up to the root. A deleted profile simply leaves the view.
CREATE VIEW profile_directory AS
WITH RECURSIVE walk AS (
  SELECT p.id AS profile_id, p.id AS ancestor_id, p.parent_id, 1 AS depth FROM profiles p
  UNION ALL
  SELECT w.profile_id, a.id, a.parent_id, w.depth + 1 FROM walk w JOIN profiles a ON a.id = w.parent_id WHERE w.depth < 64
)
SELECT p.id, p.name, p.parent_id,
       ARRAY(SELECT w.ancestor_id FROM walk w WHERE w.profile_id = p.id ORDER BY w.depth) AS ancestors
  FROM profiles p;
