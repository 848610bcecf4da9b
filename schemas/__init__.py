"""JSON Schemas shipped with mlsubmit (read as package data through mlsubmit.support.schema_loader)."""
