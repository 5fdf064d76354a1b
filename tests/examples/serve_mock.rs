//! Serves the Codex or Gemini mock API until killed, printing its URL and each request, for
//! driving a CLI by hand: `cargo run -p hookline-tests --example serve_mock -- openai|gemini`
//! (`MOCK_API_BODIES=1` prints the request bodies too).

use std::time::Duration;

use hookline_tests::{mock_gemini, mock_openai};

fn main() -> std::io::Result<()> {
    let which = std::env::args().nth(1).unwrap_or_default();
    let server = match which.as_str() {
        "openai" => mock_openai::start()?,
        "gemini" => mock_gemini::start()?,
        _ => {
            eprintln!("usage: serve_mock openai|gemini");
            std::process::exit(2);
        }
    };
    println!("{}", server.base_url());
    let mut seen = 0;
    loop {
        std::thread::sleep(Duration::from_millis(200));
        let requests = server.requests();
        for request in &requests[seen..] {
            println!("{}", request.summary());
            if let Some(body) = &request.body
                && std::env::var_os("MOCK_API_BODIES").is_some()
            {
                println!("{body:#}");
            }
        }
        seen = requests.len();
    }
}
