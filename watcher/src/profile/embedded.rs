//! The shipped profiles, compiled into the binary.

/// `(file name, text)` of every shipped profile.
pub(super) const FILES: &[(&str, &str)] = &[
    ("claude.toml", include_str!("../../../profiles/claude.toml")),
    ("legacy.toml", include_str!("../../../profiles/legacy.toml")),
];
