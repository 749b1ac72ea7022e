"""A scripted OpenAI-compatible (and Anthropic) endpoint on 127.0.0.1 for ``judge synth``:
it writes questions when asked for questions and grades when asked for a grade, and every
answer is decided by the document, so each drop reason of ``synth`` is exercised on real
text (SciFact, NFCorpus).

Per document (its title's words ``T``, its text's first 14 words ``W``), the generator
answers, as a JSON array (in a fenced block for every other document):

0. ``What is known about T?``: a good question (check grade 3), except for every 5th
   document, where it reads ``Why is T unrelated to mice?`` and the check grades it 1;
1. ``W?``: copied from the document (verbatim);
2. ``What is the main finding reported here?``: the same for every document (duplicate text
   after the first);
3. ``Why?``: too short;
4. ``What is known about the T?``: a near-paraphrase of 0 (duplicate embedding when an
   embedder is on; otherwise checked, grade 3);
5. ``How does T zzfail?``: the check judge fails (HTTP 500) on it: "check not answered".

Documents whose id ends in ``7`` get prose without any question line for the first
``broken_gen`` requests (a generation failure, healed on a rerun when ``broken_gen`` runs out).
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import List


def title_words(title: str, n: int = 6) -> str:
    words = re.findall(r"[A-Za-z][A-Za-z-]+", title)
    return " ".join(words[:n]).lower() or "this topic"


def questions_for(title: str, text: str, doc_no: int) -> List[str]:
    t = title_words(title)
    first = " ".join(text.split()[:14]).rstrip(".,;:")
    good = f"Why is {t} unrelated to mice?" if doc_no % 5 == 4 else f"What is known about {t}?"
    return [
        good,
        f"{first}?",
        "What is the main finding reported here?",
        "Why?",
        f"What is known about the {t}?",
        f"How does {t} zzfail?",
    ]


class FakeSynthLLM:
    def __init__(self, broken_gen: int = 0, failing_checks: bool = True):
        self.failing_checks = failing_checks
        self.requests: Counter = Counter()
        self.generations = 0
        self.checks = 0
        self.broken_gen = broken_gen
        self._lock = threading.Lock()
        self._doc_no: dict = {}
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                try:
                    fake._handle(self)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    @property
    def total(self) -> int:
        return self.generations + self.checks

    def _send(self, h, status: int, obj) -> None:
        data = json.dumps(obj).encode()
        h.send_response(status)
        h.send_header("content-type", "application/json")
        h.send_header("content-length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def _reply(self, h, text: str) -> None:
        if h.path.endswith("/v1/messages"):
            body = {
                "id": "m",
                "type": "message",
                "role": "assistant",
                "content": [{"type": "text", "text": text}],
                "usage": {"input_tokens": 50, "output_tokens": 5},
            }
        else:
            body = {
                "choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 50, "completion_tokens": 5},
            }
        self._send(h, 200, body)

    def _handle(self, h) -> None:
        body = json.loads(h.rfile.read(int(h.headers["content-length"])))
        prompt = body["messages"][0]["content"]
        gen = re.search(r"Document:\n(.*)\n\nAnswer with a JSON array", prompt, re.S)
        if gen:
            return self._generate(h, gen.group(1))
        m = re.search(r"Query: (.*)\nPassage: (.*?)\n\nSplit this problem", prompt, re.S)
        if not m:
            return self._send(h, 400, {"error": {"message": "unexpected prompt"}})
        with self._lock:
            self.checks += 1
        query = m.group(1)
        if "zzfail" in query and self.failing_checks:
            return self._send(h, 500, {"error": {"type": "server_error"}})
        self._reply(h, "1" if "unrelated to mice" in query else "3")

    def _generate(self, h, document: str) -> None:
        title, _, text = document.partition("\n")
        with self._lock:
            self.generations += 1
            self.requests[title] += 1
            n = self._doc_no.setdefault(title, len(self._doc_no))
            broken = self.broken_gen > 0 and n % 10 == 7
            if broken:
                self.broken_gen -= 1
        if broken:
            return self._reply(h, "")
        qs = questions_for(title, text, n)
        answer = json.dumps(qs, indent=1)
        self._reply(h, f"```json\n{answer}\n```" if n % 2 else answer)
