//! A small deterministic generator (xorshift) for tests, so that a failure reproduces from its
//! seed. Part of the relay binary's unit tests only; the watcher's lossless tests and the fuzz
//! crate's corpus test include this same file by path, as the fuzz crate includes the relay's
//! modules.

/// A xorshift64 generator; its state is the seed (never 0).
pub struct Rng(pub u64);

impl Rng {
    /// The next number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}
