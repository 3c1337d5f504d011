-- The flows ingest journals' ranges each stored take covered (journal id, offsets [first, end)), written in the
-- rollups' own transaction: after a crash the decoders skip what is here, so a replayed datagram is counted once.
-- Rows at or below a journal's checkpoint (the offset its own file says is stored) are pruned.
CREATE TABLE journal_commits (
  journal_id uuid NOT NULL,
  first_offset bigint NOT NULL,
  end_offset bigint NOT NULL,
  committed_at timestamptz NOT NULL DEFAULT now(),
  CHECK (end_offset > first_offset)
);
CREATE INDEX journal_commits_end ON journal_commits (journal_id, end_offset);
