-- Deleting a folder cascades to its pins; the primary key leads with account_id, so this index serves that delete.
CREATE INDEX pins_group_idx ON pins (group_id);
