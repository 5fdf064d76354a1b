//! The digest hookline tells files and configurations apart by (FNV-1a, 64 bits): of the
//! profiles a state was folded with, of a checkpoint's body. Stable across builds and
//! platforms; not for security.

/// The digest of `bytes`, continuing `seed` (FNV-1a, 64 bits): stable across builds and
/// platforms, for telling files apart, not for security.
pub fn digest(seed: u64, bytes: &[u8]) -> u64 {
    let mut fnv = Fnv(if seed == 0 { Fnv::OFFSET } else { seed });
    fnv.feed(bytes);
    fnv.finish()
}

/// FNV-1a, 64 bits, fed as it goes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fnv(u64);

impl Fnv {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0100_0000_01b3;

    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 ^= u64::from(*byte);
            self.0 = self.0.wrapping_mul(Fnv::PRIME);
        }
    }

    /// With a separator, so that ("ab", "c") and ("a", "bc") differ.
    pub(crate) fn finish(self) -> u64 {
        (self.0 ^ 0xff).wrapping_mul(Fnv::PRIME)
    }
}

/// A writer that counts and digests what goes through it: a checkpoint is written as it is
/// encoded, never held whole in memory.
pub(crate) struct Digesting<W> {
    pub(crate) inner: W,
    pub(crate) fnv: Fnv,
    pub(crate) len: u64,
}

impl<W> Digesting<W> {
    /// Digests what is written to `inner`, from nothing.
    pub(crate) fn new(inner: W) -> Digesting<W> {
        Digesting { inner, fnv: Fnv(Fnv::OFFSET), len: 0 }
    }
}

impl<W: std::io::Write> std::io::Write for Digesting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.fnv.feed(&buf[..n]);
        self.len += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}
