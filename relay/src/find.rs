//! Finding a byte in a slice, without CPU feature detection.
//!
//! `memchr::memchr` picks its AVX2 or SSE2 routine on its first call by asking the CPU what it
//! supports (std's feature detection: a series of `CPUID` instructions). In a virtual machine
//! each `CPUID` traps to the hypervisor, and the relay, a new process on every hook call, would
//! pay that every time for strings of a few bytes: measured on a 2-core VM it was about 3 % of
//! a whole 2 KiB call. SSE2 is part of x86-64 itself, so memchr's SSE2 routine is used
//! directly there; elsewhere `memchr`'s own.

/// The index of the first `needle` in `haystack`.
#[inline]
pub fn byte(needle: u8, haystack: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if let Some(finder) = memchr::arch::x86_64::sse2::memchr::One::new(needle) {
        return finder.find(haystack);
    }
    memchr::memchr(needle, haystack)
}

/// The index of the first `a` or `b` in `haystack`.
#[inline]
pub fn either(a: u8, b: u8, haystack: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if let Some(finder) = memchr::arch::x86_64::sse2::memchr::Two::new(a, b) {
        return finder.find(haystack);
    }
    memchr::memchr2(a, b, haystack)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_first_occurrence_at_every_offset_and_length() {
        let text: Vec<u8> = (0..200u8).map(|i| b'a' + i % 23).collect();
        for start in 0..64 {
            for end in start..text.len() {
                let slice = &text[start..end];
                for needle in [b'a', b'k', b'w', b'"'] {
                    assert_eq!(byte(needle, slice), slice.iter().position(|&b| b == needle));
                    assert_eq!(
                        either(needle, b'c', slice),
                        slice.iter().position(|&b| b == needle || b == b'c')
                    );
                }
            }
        }
    }
}
