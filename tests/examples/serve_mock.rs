//! Serves one of the mock model APIs until killed, printing its URL and each request, for
//! driving a CLI by hand: `cargo run -p hookline-tests --example serve_mock --
//! anthropic|openai|gemini` (`MOCK_API_BODIES=1` prints the request bodies too).

use std::time::Duration;

use hookline_tests::{mock_api, mock_gemini, mock_openai};

fn main() -> std::io::Result<()> {
    let which = std::env::args().nth(1).unwrap_or_default();
    let (server, url_prefix) = match which.as_str() {
        "anthropic" => (mock_api::start()?, "ANTHROPIC_BASE_URL="),
        "openai" => (mock_openai::start()?, ""),
        "gemini" => (mock_gemini::start()?, ""),
        _ => {
            eprintln!("usage: serve_mock anthropic|openai|gemini");
            std::process::exit(2);
        }
    };
    println!("{url_prefix}{}", server.base_url());
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
