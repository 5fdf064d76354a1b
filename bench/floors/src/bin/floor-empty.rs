//! The exec floor: starts, does nothing, exits 0.

fn main() {}
