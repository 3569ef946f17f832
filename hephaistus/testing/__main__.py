"""`python -m hephaistus.testing SCRIPT`: serve scripted model replies on 127.0.0.1 by hand."""

from __future__ import annotations

import argparse
import time

from hephaistus.testing.chat_server import ChatServer


def main(argv: list[str] | None = None) -> int:
    """Serve a script of replies for trying heph by hand: one JSON reply per line of a file."""
    parser = argparse.ArgumentParser(prog="python -m hephaistus.testing")
    parser.add_argument("script", help="file with one model reply per line (JSON or text)")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    server = ChatServer()
    with open(args.script, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                server.reply(line.rstrip("\n"))
    server.start(args.port)
    print(server.url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
