//! The shipped profiles, compiled into the binary.

/// `(file name, text)` of every shipped profile.
pub(super) const FILES: &[(&str, &str)] = &[
    ("claude.toml", include_str!("../../../profiles/claude.toml")),
    ("codex.toml", include_str!("../../../profiles/codex.toml")),
    ("gemini.toml", include_str!("../../../profiles/gemini.toml")),
    ("copilot.toml", include_str!("../../../profiles/copilot.toml")),
    ("cursor.toml", include_str!("../../../profiles/cursor.toml")),
    ("opencode.toml", include_str!("../../../profiles/opencode.toml")),
    ("kilo.toml", include_str!("../../../profiles/kilo.toml")),
    ("pi.toml", include_str!("../../../profiles/pi.toml")),
    ("qwen.toml", include_str!("../../../profiles/qwen.toml")),
    ("droid.toml", include_str!("../../../profiles/droid.toml")),
    ("legacy.toml", include_str!("../../../profiles/legacy.toml")),
    ("grok.toml", include_str!("../../../profiles/grok.toml")),
    ("kimi.toml", include_str!("../../../profiles/kimi.toml")),
    ("antigravity.toml", include_str!("../../../profiles/antigravity.toml")),
];
