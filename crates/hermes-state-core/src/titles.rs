//! Session titles (`api.md` §6): the rules every backend applies alike.

use crate::original::OriginalError;

/// The longest title accepted, in code points (after normalisation).
pub const MAX_TITLE_CHARS: usize = 100;

/// Why a title was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TitleError {
    /// Longer than [`MAX_TITLE_CHARS`] after normalisation.
    #[error("Title too long ({chars} chars, max {MAX_TITLE_CHARS})")]
    TooLong {
        /// Code points after normalisation.
        chars: usize,
    },
}

impl TitleError {
    /// The original's exception for this refusal.
    pub fn original_class(&self) -> Option<OriginalError> {
        match self {
            TitleError::TooLong { .. } => Some(OriginalError::TitleTooLong),
        }
    }
}
