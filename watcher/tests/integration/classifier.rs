//! The shipped OpenAI-compatible classifier script (docs/examples/openai-classifier.py)
//! against a local fake endpoint.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::thread;
use std::time::Duration;

use hookline::decide::Question;
use hookline::decide::classifier::{
    ClassifierVerdict, Consult, ConsultInput, ConsultOutcome, CrashedVerdict,
};

/// Answers one chat-completions request with `content`; returns the request body.
fn fake_endpoint(content: &'static str) -> (String, thread::JoinHandle<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    let handle = thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        assert!(line.starts_with("POST /v1/chat/completions "), "{line}");
        let mut length = 0;
        loop {
            let mut header = String::new();
            reader.read_line(&mut header).unwrap();
            if header.trim().is_empty() {
                break;
            }
            if let Some(v) = header.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        let reply = serde_json::json!({"choices": [{"message": {"content": content}}]}).to_string();
        let mut stream = stream;
        write!(
            stream,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{reply}",
            reply.len()
        )
        .unwrap();
        String::from_utf8(body).unwrap()
    });
    (base, handle)
}

fn script() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/examples/openai-classifier.py");
    path.to_str().unwrap().to_owned()
}

#[test]
fn the_openai_compatible_script_sends_the_instruction_and_prints_the_first_line() {
    let (base, endpoint) = fake_endpoint(" Wedged\nThe screen shows a stack trace.");
    let consult = Consult {
        command: vec![
            "env".into(),
            format!("OPENAI_BASE_URL={base}"),
            "CLASSIFIER_MODEL=tiny".into(),
            "python3".into(),
            script(),
        ],
        input: ConsultInput::screen("Traceback (most recent call last):\n  ...").unwrap(),
        timeout: Duration::from_secs(30),
    };
    let note = consult.run();
    let body: serde_json::Value = serde_json::from_str(&endpoint.join().unwrap()).unwrap();
    assert_eq!(body["model"], "tiny");
    let prompt = body["messages"][0]["content"].as_str().unwrap();
    assert!(prompt.contains("hookline classifier") && prompt.contains("Traceback"), "{prompt}");
    assert_eq!(
        (note.verdict, note.outcome),
        (ClassifierVerdict::Crashed(CrashedVerdict::Wedged), ConsultOutcome::Answered),
        "{note:?}"
    );
    assert_eq!(note.question, Question::Crashed);
}

#[test]
fn the_script_fails_loudly_when_the_endpoint_is_down_and_that_reads_unknown() {
    // A port nothing listens on: bound, then closed.
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let consult = Consult {
        command: vec![
            "env".into(),
            format!("OPENAI_BASE_URL=http://127.0.0.1:{port}/v1"),
            "python3".into(),
            script(),
        ],
        input: ConsultInput::last_message("All done.").unwrap(),
        timeout: Duration::from_secs(30),
    };
    let note = consult.run();
    assert_eq!(note.outcome, ConsultOutcome::Failed, "{note:?}");
    assert!(note.verdict.is_unknown());
}
