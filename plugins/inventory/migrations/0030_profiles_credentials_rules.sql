-- Profiles, credentials and classification rules: indexes for their keyset lists and for the
-- "still in use?" checks that guard their deletion.

-- Lists page by (lower(name), id).
CREATE INDEX profiles_list_idx ON profiles (lower(name), id);
CREATE INDEX credentials_list_idx ON credentials (lower(name), id);

-- A profile is in use while child profiles or classification rules name it (nodes: nodes_profile_idx).
CREATE INDEX profiles_parent_idx ON profiles (parent_id);
CREATE INDEX classification_rules_profile_idx ON classification_rules (profile_id);

-- A credential is in use while a URL check names it (nodes: nodes_credential_idx).
CREATE INDEX url_checks_credential_idx ON url_checks (credential_id);
