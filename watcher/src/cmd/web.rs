//! `hookline web`: see `hookline::web`.

pub fn run(args: &crate::cli::WebArgs) -> super::Outcome {
    let _ = args;
    Err("not yet".into())
}
