//! How the relay binary is linked: statically, by `.cargo/static-relay.sh`, wherever glibc's
//! static library is installed (a dynamic relay works the same, only slower to start); and, as
//! a static executable, without glibc's name-service code, which would need shared libraries.

use crate::util::relay;

/// Whether an ELF executable names a program interpreter (`PT_INTERP`): the dynamic loader.
fn has_interpreter(bytes: &[u8]) -> bool {
    assert_eq!(&bytes[..6], b"\x7fELF\x02\x01", "a 64-bit little-endian ELF file");
    let u16_at = |at: usize| usize::from(u16::from_le_bytes([bytes[at], bytes[at + 1]]));
    let phoff = u64::from_le_bytes(bytes[0x20..0x28].try_into().unwrap()) as usize;
    let (phentsize, phnum) = (u16_at(0x36), u16_at(0x38));
    (0..phnum).any(|i| {
        let at = phoff + i * phentsize;
        u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) == 3
    })
}

/// Whether the C compiler rustc links with finds glibc's static library, as the build script
/// asks it.
fn static_glibc_installed() -> bool {
    let cc = std::env::var_os("CC").unwrap_or_else(|| "cc".into());
    let Ok(out) = std::process::Command::new(cc).arg("-print-file-name=libc.a").output() else {
        return false;
    };
    let path = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    path.starts_with('/') && std::path::Path::new(&path).exists()
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn the_relay_is_static_where_static_glibc_is_installed_and_looks_no_names_up() {
    let bytes = std::fs::read(relay()).unwrap();
    if !static_glibc_installed() {
        assert!(has_interpreter(&bytes), "without libc.a the relay is linked dynamically");
        return;
    }
    assert!(
        !has_interpreter(&bytes),
        "{} is dynamically linked: build it from inside the repository, so that cargo reads \
         .cargo/config.toml",
        relay().display()
    );
    // getpwuid, getaddrinfo and the like go through NSS, which a static glibc can only load
    // from shared libraries of its own version at run time: none may be linked in.
    for needle in [&b"nsswitch.conf"[..], b"libnss_"] {
        let found = bytes.windows(needle.len()).any(|w| w == needle);
        assert!(
            !found,
            "the relay links glibc's name service ({})",
            String::from_utf8_lossy(needle)
        );
    }
}
