//! Read operations of the facade: thin calls of `hermes_state_query` on a
//! pooled read connection, each in one read transaction with the schema
//! cookie check ([`SessionDb::snapshot_read`]).
