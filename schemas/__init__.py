"""JSON Schemas shipped with mlsubmit (read as package data through mlsubmit.core.support.schema_loader)."""
