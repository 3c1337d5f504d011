-- What a poller needs of a node, published for the polling plugin: its SNMP port and credential,
-- its profile's poll interval, and its URL and DNS checks (as stored: credential ids, no secrets).
-- CREATE OR REPLACE VIEW keeps the existing columns in place and appends these.
CREATE OR REPLACE VIEW node_directory AS
SELECT n.id, n.name, n.address, n.group_id,
       coalesce(f.path, '{}'::uuid[]) AS folder_path,
       coalesce(f.names, '{}'::text[]) AS folder_names,
       coalesce(n.pool, f.effective_pool, 'default') AS effective_pool,
       ARRAY(SELECT DISTINCT t FROM unnest(coalesce(f.effective_tags, '{}'::text[]) || n.tags) t WHERE t <> ALL (n.tags_excluded) ORDER BY t) AS effective_tags,
       n.profile_id, n.vendor, n.model,
       n.snmp_port, n.credential_id, p.poll_interval_secs,
       (SELECT jsonb_build_object('url', u.url, 'method', u.method, 'timeout_ms', u.timeout_ms, 'follow_redirects', u.follow_redirects,
                                  'verify_tls', u.verify_tls, 'expected_status', u.expected_status, 'body_match', u.body_match,
                                  'body_max_bytes', u.body_max_bytes, 'json_extract', u.json_extract, 'credential_id', u.credential_id)
          FROM url_checks u WHERE u.node_id = n.id) AS url_check,
       (SELECT jsonb_build_object('name', d.name, 'record_type', d.record_type, 'resolver_ip', host(d.resolver_ip),
                                  'resolver_port', d.resolver_port, 'timeout_ms', d.timeout_ms, 'max_depth', d.max_depth)
          FROM dns_checks d WHERE d.node_id = n.id) AS dns_check
  FROM nodes n
  LEFT JOIN folder_paths f ON f.id = n.group_id
  LEFT JOIN profiles p ON p.id = n.profile_id;
