-- Issue 14.5: how a vendor's document says calls authenticate, read from its
-- securitySchemes at import, so the console's connection form starts with the kind
-- (`bearer`, `header`, `query`, `basic`) and the header or query parameter name. NULL:
-- no document, or no scheme Graft can use.
ALTER TABLE vendors ADD COLUMN auth_kind TEXT NULL;
ALTER TABLE vendors ADD COLUMN auth_name TEXT NULL;
