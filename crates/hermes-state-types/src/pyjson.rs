//! Python-compatible JSON text (placeholder, being written).
