//! Serves the mock Messages API until killed, printing its URL and each request, for driving
//! a CLI by hand: `cargo run -p hookline-tests --example serve_mock_api`.

use std::time::Duration;

use hookline_tests::mock_api::MockApi;

fn main() -> std::io::Result<()> {
    let api = MockApi::start()?;
    println!("ANTHROPIC_BASE_URL={}", api.base_url());
    let mut seen = 0;
    loop {
        std::thread::sleep(Duration::from_millis(200));
        let requests = api.requests();
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
