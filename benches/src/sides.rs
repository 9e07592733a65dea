//! The order of the sides of an interleaved measurement: a new shuffled
//! order every round, so no side always follows the one that warms its
//! caches (see `examples/search_overhead.rs`).

/// Marsaglia's xorshift64: a fixed, reproducible order of sides per round,
/// and no dependency for eight lines.
pub struct Xorshift(pub u64);

impl Xorshift {
    /// The next value.
    pub fn next_value(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Fisher–Yates.
    pub fn shuffle(&mut self, sides: &mut [usize]) {
        for i in (1..sides.len()).rev() {
            let j = (self.next_value() % (i as u64 + 1)) as usize;
            sides.swap(i, j);
        }
    }
}
