-- URL and DNS checks: the ranges and vocabularies the API enforces, also held by the tables
-- (a bundle import or a hand-written row cannot store what the monitors would misread).

ALTER TABLE url_checks
  ADD CONSTRAINT url_checks_url_check CHECK (length(url) BETWEEN 1 AND 2048 AND url ~* '^https?://'),
  ADD CONSTRAINT url_checks_method_check CHECK (method IN ('GET', 'HEAD', 'POST', 'PUT', 'OPTIONS')),
  ADD CONSTRAINT url_checks_timeout_ms_check CHECK (timeout_ms BETWEEN 100 AND 60000),
  ADD CONSTRAINT url_checks_expected_status_check CHECK (coalesce(expected_status ->> 'kind' IN ('two_xx', 'exact', 'range'), false)),
  ADD CONSTRAINT url_checks_body_match_check CHECK (body_match IS NULL OR coalesce(body_match ->> 'mode' IN ('contains', 'not_contains', 'regex'), false)),
  ADD CONSTRAINT url_checks_json_extract_check CHECK (
    CASE WHEN jsonb_typeof(json_extract) = 'array' THEN jsonb_array_length(json_extract) <= 16 ELSE false END);

ALTER TABLE dns_checks
  ADD CONSTRAINT dns_checks_name_check CHECK (length(name) BETWEEN 1 AND 254),
  ADD CONSTRAINT dns_checks_record_type_check CHECK (record_type IN ('A', 'AAAA', 'CNAME', 'MX', 'NS', 'PTR', 'SOA', 'SRV', 'TXT')),
  ADD CONSTRAINT dns_checks_timeout_ms_check CHECK (timeout_ms BETWEEN 100 AND 60000),
  ADD CONSTRAINT dns_checks_max_depth_check CHECK (max_depth BETWEEN 1 AND 16);
