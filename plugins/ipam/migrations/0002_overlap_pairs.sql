-- The overlapping prefix pairs between IPAM sites, recomputed (GiST self-join) by every sync and server delete in the
-- same transaction as the prefixes they come from, so GET /subnet-overlaps reads them instead of joining 100k
-- prefixes per request. Folder ranges are joined live (they are few and change outside this plugin).
CREATE TABLE overlap_pairs (
  key text PRIMARY KEY,
  lo cidr NOT NULL,
  hi cidr NOT NULL
);
