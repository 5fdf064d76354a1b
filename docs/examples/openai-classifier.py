#!/usr/bin/env python3
"""A hookline classifier for any OpenAI-compatible chat completions endpoint.

hookline writes its instruction and the bounded session text on stdin and reads one word from
the first line of stdout (docs/classifier.md). This script sends the whole of stdin as one user
message and prints the first line of the reply. Anything that goes wrong exits non-zero, which
hookline reads as `unknown`: the deterministic decision stands.

    [classifier]
    command = ["python3", "/path/to/openai-classifier.py"]
    timeout = "20s"

Environment: OPENAI_BASE_URL (default https://api.openai.com/v1), OPENAI_API_KEY (optional
for a local server), CLASSIFIER_MODEL (default gpt-4o-mini). Standard library only.
"""

import json
import os
import sys
import urllib.request


def main() -> int:
    prompt = sys.stdin.read()
    base = os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1").rstrip("/")
    body = {
        "model": os.environ.get("CLASSIFIER_MODEL", "gpt-4o-mini"),
        "messages": [{"role": "user", "content": prompt}],
        "max_tokens": 5,
        "temperature": 0,
    }
    headers = {"Content-Type": "application/json"}
    key = os.environ.get("OPENAI_API_KEY")
    if key:
        headers["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(
        f"{base}/chat/completions", data=json.dumps(body).encode(), headers=headers
    )
    # hookline kills the process group at classifier.timeout; this bound is for use by hand.
    with urllib.request.urlopen(request, timeout=60) as response:
        reply = json.load(response)
    content = reply["choices"][0]["message"]["content"] or ""
    lines = content.strip().splitlines()
    print(lines[0] if lines else "")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as error:  # any failure is `unknown` to hookline
        print(f"openai-classifier: {error}", file=sys.stderr)
        sys.exit(1)
