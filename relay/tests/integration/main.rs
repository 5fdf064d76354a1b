//! Spawns the built relay as an agent CLI would.
