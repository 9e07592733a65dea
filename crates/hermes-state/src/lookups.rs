//! Finding sessions: by title, by id prefix, along compression lineages and
//! by gateway peer (`api.md` §2.4, §6.2, §9.2, §12.2). Thin calls of
//! `hermes_state_query::lookups` under the handle's mutex.
