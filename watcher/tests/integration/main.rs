//! hookline library integration tests (the ones that run the `hookline` binary are in
//! cli/tests).

mod classifier;
mod docs;
mod errors;
mod layers;
