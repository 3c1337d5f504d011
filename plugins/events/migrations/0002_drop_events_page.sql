-- events_page (received_at DESC, id DESC) repeated the primary key (received_at, id): a btree is read backwards as
-- well as forwards, so the newest-first list walks the primary key. One index fewer to update per stored event.
DROP INDEX events_page;
