-- A routing rule may be limited to alerts of nodes filed in some folders (at any depth); empty = every alert.
ALTER TABLE routing_rules ADD COLUMN folder_ids uuid[] NOT NULL DEFAULT '{}';
