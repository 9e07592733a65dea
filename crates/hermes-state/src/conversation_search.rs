//! Search by conversation on the facade.
