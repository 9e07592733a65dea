//! How the library's reports read to a person. The library hands out plain
//! data; every sentence the command line prints about it is written here.

pub mod conversation;
pub mod doctor;
pub mod markdown;
#[cfg(feature = "postgres")]
pub mod pg_doctor;
