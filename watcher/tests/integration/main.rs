//! hookline integration tests.
