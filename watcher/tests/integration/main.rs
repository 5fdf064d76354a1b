//! hookline integration tests.

mod install;
